/**
 * The perpetual futures engine's facade: pure, synchronous and deterministic. A command goes in (with
 * the caller's `id` and `ts`), a result comes out with the events it caused, each with the next seq.
 * No I/O, no clock, no randomness (docs/perp-engine.md, docs/perp-risk.md).
 *
 * The rules live by concern: state/ (accounts, positions, instruments), book/, matching/, risk/
 * (margin, admission, price bands, liquidation, ADL), funding/, pool/, and one module per command
 * group in commands/ (validate → plan → execute). This class only dispatches, re-arms the liquidation
 * triggers of the accounts a command changed, and answers reads.
 *
 * Bad input never throws: it returns `{ ok: false, code, message }` and changes nothing. Only a
 * programmer error (an invalid genesis configuration, a corrupt snapshot, a broken invariant) throws.
 */
import type { Side } from './book/order-book.ts';
import { cancelAllAfterCommand } from './commands/cancel-after-command.ts';
import { cancelAllCommand, cancelOrderCommand, cancelOrdersCommand } from './commands/cancel-commands.ts';
import { depositCommand, requestWithdrawalCommand, settleWithdrawalCommand, withdrawCommand } from './commands/collateral-commands.ts';
import { addInstrumentCommand, updateInstrumentCommand } from './commands/instrument-commands.ts';
import { addLiquidityCommand, removeLiquidityCommand } from './commands/liquidity-commands.ts';
import { applyFundingCommand, setMarkPriceCommand } from './commands/market-commands.ts';
import { placeOrderCommand } from './commands/place-order-command.ts';
import { applySplitCommand } from './commands/split-command.ts';
import { adjustMarginCommand, setLeverageCommand } from './commands/position-commands.ts';
import type {
  Accepted,
  AccountView,
  AdjustMarginCommand,
  AmendOrderCommand,
  AmendOrderResult,
  ApplyFundingCommand,
  ApplySplitCommand,
  CancelAllCommand,
  CancelAllResult,
  CancelOrderCommand,
  CancelOrdersCommand,
  CancelOrdersResult,
  CommandResult,
  DepositCommand,
  EngineCommand,
  EngineSnapshot,
  MarginSummary,
  OrderView,
  PlaceOrderCommand,
  PlaceOrderResult,
  PositionView,
  Rejected,
  SetLeverageCommand,
  SetMarkPriceCommand,
  SplitAccepted,
  WithdrawCommand,
} from './engine-types.ts';
import { ENGINE_RULES } from './engine-types.ts';
import { DEFAULT_INSTRUMENTS, instrumentSpec, type InstrumentConfig, type InstrumentSpec } from './instruments.ts';
import { MatchPlan } from './matching/match-plan.ts';
import { poolEquity, valueOf } from './pool/liquidity-pool.ts';
import { indexFresh, rearmDirty, sweep } from './risk/liquidation.ts';
import { initialMargin, maintenanceMargin, marginSummary, valuation } from './risk/margin.ts';
import { restoreState, snapshotOf, stateHashOf } from './snapshot.ts';
import { settleTriggers, triggersPending } from './triggers/fire-triggers.ts';
import { amendOrderCommand } from './commands/amend-order-command.ts';
import { setRulesCommand } from './commands/set-rules-command.ts';
import type { EngineOrder } from './state/entities.ts';
import { DEFAULT_LEVERAGE, EngineState, FEE_ACCOUNT, reject } from './state/engine-state.ts';
import { normaliseAccount, isSafePosInt } from './state/validate.ts';

export { DEFAULT_LEVERAGE, FEE_ACCOUNT, INSURANCE_ACCOUNT, POOL_ACCOUNT } from './state/engine-state.ts';
export { MAX_BATCH_CANCEL } from './commands/cancel-commands.ts';
export { MAX_FUNDING_RATE_E9 } from './commands/market-commands.ts';
export { MIN_CANCEL_AFTER_MS, MAX_CANCEL_AFTER_MS } from './commands/cancel-after-command.ts';
export { MAX_SPLIT_RATIO } from './commands/split-command.ts';
export { CLOSED_MARKET_BAND_FACTOR, effectiveBandPpm } from './risk/price-band.ts';
export { MAX_AMOUNT } from './state/validate.ts';
export { PARTIAL_COOLDOWN_MS, PARTIAL_NOTIONAL, PARTIAL_STEP_PPM } from './risk/liquidation.ts';

export interface PerpEngineOptions {
  /** Instruments of the genesis state (no events). Default: DEFAULT_INSTRUMENTS; the sequencer lists them by command instead. */
  instruments?: readonly InstrumentConfig[];
  /** Default: FEE_ACCOUNT. */
  feeAccount?: string;
  /** Default: DEFAULT_LEVERAGE. */
  defaultLeverage?: number;
  /**
   * The rules in force (ENGINE_RULES). Default: this engine's own, as for an engine of a test; a
   * journal's genesis engine starts at 1 and replays its setRules rows (journal-replay.ts).
   */
  rules?: number;
}

/** One handler per command kind; a switch (the compiler checks it covers every kind), not a lookup, on the hot path. */
function dispatch(s: EngineState, plan: MatchPlan, cmd: EngineCommand): CommandResult {
  switch (cmd.kind) {
    case 'placeOrder':
      return placeOrderCommand(s, plan, cmd);
    case 'amendOrder':
      return amendOrderCommand(s, plan, cmd);
    case 'cancelOrder':
      return cancelOrderCommand(s, cmd);
    case 'cancelOrders':
      return cancelOrdersCommand(s, cmd);
    case 'cancelAll':
      return cancelAllCommand(s, cmd);
    case 'deposit':
      return depositCommand(s, cmd);
    case 'withdraw':
      return withdrawCommand(s, cmd);
    case 'setLeverage':
      return setLeverageCommand(s, cmd);
    case 'adjustMargin':
      return adjustMarginCommand(s, cmd);
    case 'setMarkPrice':
      return setMarkPriceCommand(s, plan, cmd);
    case 'applyFunding':
      return applyFundingCommand(s, plan, cmd);
    case 'addInstrument':
      return addInstrumentCommand(s, cmd);
    case 'updateInstrument':
      return updateInstrumentCommand(s, cmd);
    case 'requestWithdrawal':
      return requestWithdrawalCommand(s, cmd);
    case 'settleWithdrawal':
      return settleWithdrawalCommand(s, cmd);
    case 'addLiquidity':
      return addLiquidityCommand(s, cmd);
    case 'removeLiquidity':
      return removeLiquidityCommand(s, cmd);
    case 'cancelAllAfter':
      return cancelAllAfterCommand(s, cmd);
    case 'applySplit':
      return applySplitCommand(s, cmd);
    case 'setRules':
      return setRulesCommand(s, cmd);
    default: {
      const unknown: never = cmd;
      return reject('INVALID', `kind: unknown command ${JSON.stringify((unknown as { kind?: unknown }).kind)}`);
    }
  }
}

export interface InsuranceFundView {
  balance: bigint;
  /** Liquidation fees received, all time. */
  feesReceived: bigint;
  /** Bad debt paid, all time. */
  badDebtPaid: bigint;
  /** Accounts with bad debt not yet resolved (withdrawals pause while any exist). */
  openBadDebt: string[];
}

export interface PoolView {
  equity: bigint;
  collateral: bigint;
  totalShares: bigint;
  holders: number;
}

export interface LpView {
  account: string;
  shares: bigint;
  value: bigint;
  netDeposited: bigint;
  lockedUntil: number;
}

export class PerpEngine {
  private s: EngineState;
  private readonly plan = new MatchPlan();

  constructor(options: PerpEngineOptions = {}) {
    const defaultLeverage = options.defaultLeverage ?? DEFAULT_LEVERAGE;
    if (!isSafePosInt(defaultLeverage)) throw new Error('engine: defaultLeverage must be a positive integer');
    const fee = (options.feeAccount ?? FEE_ACCOUNT).toLowerCase();
    if (normaliseAccount(fee) === null) throw new Error('engine: feeAccount must be a 0x address');
    this.s = new EngineState(defaultLeverage, fee);
    const rules = options.rules ?? ENGINE_RULES;
    if (!isSafePosInt(rules) || rules > ENGINE_RULES) throw new Error(`engine: rules must be 1..${ENGINE_RULES}`);
    this.s.rules = rules;
    for (const config of options.instruments ?? DEFAULT_INSTRUMENTS) {
      const spec = instrumentSpec(config);
      if (this.s.instruments.has(spec.symbol)) throw new Error(`engine: instrument ${spec.symbol} configured twice`);
      this.s.addInstrument(spec);
    }
  }

  // ===========================================================================================
  // Commands.

  /** Applies any command; dispatches on `kind`. Never throws for bad input. */
  apply(cmd: EngineCommand): CommandResult {
    if (cmd === null || typeof cmd !== 'object') return reject('INVALID', 'command: must be an object');
    const s = this.s;
    const r = dispatch(s, this.plan, cmd);
    if (!r.ok) {
      if (s.dirty.length !== 0) rearmDirty(s);
      return r;
    }
    // What the command set off, its events after the command's own: trigger orders its trades reached
    // and closePosition triggers of positions it closed, then liquidation of accounts a trade left
    // under maintenance (a resting order the mark has run past fills), then the triggers that closed.
    if (triggersPending(s)) {
      s.events = r.events;
      settleTriggers(s, this.plan, cmd.ts);
      s.end();
    }
    if (s.dirty.length !== 0) {
      const below = rearmDirty(s);
      if (below.length !== 0) {
        s.events = r.events;
        sweep(s, this.plan, new Set(below), cmd.ts);
        if (triggersPending(s)) settleTriggers(s, this.plan, cmd.ts);
        s.end();
        if (s.dirty.length !== 0) rearmDirty(s);
      }
    }
    return r;
  }

  deposit(cmd: DepositCommand): Accepted | Rejected {
    return this.apply({ ...cmd, kind: 'deposit' }) as Accepted | Rejected;
  }
  withdraw(cmd: WithdrawCommand): Accepted | Rejected {
    return this.apply({ ...cmd, kind: 'withdraw' }) as Accepted | Rejected;
  }
  placeOrder(cmd: PlaceOrderCommand): PlaceOrderResult {
    return this.apply({ ...cmd, kind: 'placeOrder' }) as PlaceOrderResult;
  }
  amendOrder(cmd: AmendOrderCommand): AmendOrderResult {
    return this.apply({ ...cmd, kind: 'amendOrder' }) as AmendOrderResult;
  }
  cancelOrder(cmd: CancelOrderCommand): Accepted | Rejected {
    return this.apply({ ...cmd, kind: 'cancelOrder' }) as Accepted | Rejected;
  }
  cancelOrders(cmd: CancelOrdersCommand): CancelOrdersResult {
    return this.apply({ ...cmd, kind: 'cancelOrders' }) as CancelOrdersResult;
  }
  cancelAll(cmd: CancelAllCommand): CancelAllResult {
    return this.apply({ ...cmd, kind: 'cancelAll' }) as CancelAllResult;
  }
  setLeverage(cmd: SetLeverageCommand): Accepted | Rejected {
    return this.apply({ ...cmd, kind: 'setLeverage' }) as Accepted | Rejected;
  }
  adjustMargin(cmd: AdjustMarginCommand): Accepted | Rejected {
    return this.apply({ ...cmd, kind: 'adjustMargin' }) as Accepted | Rejected;
  }
  setMarkPrice(cmd: SetMarkPriceCommand): Accepted | Rejected {
    return this.apply({ ...cmd, kind: 'setMarkPrice' }) as Accepted | Rejected;
  }
  applyFunding(cmd: ApplyFundingCommand): Accepted | Rejected {
    return this.apply({ ...cmd, kind: 'applyFunding' }) as Accepted | Rejected;
  }
  applySplit(cmd: ApplySplitCommand): SplitAccepted | Rejected {
    return this.apply({ ...cmd, kind: 'applySplit' }) as SplitAccepted | Rejected;
  }

  // ===========================================================================================
  // Reads (for the API and the workers).

  /** The rules in force (ENGINE_RULES in engine-types.ts). */
  get rules(): number {
    return this.s.rules;
  }

  get lastSeq(): number {
    return this.s.nextSeq - 1;
  }

  /** The highest order id issued so far (0 before any order). */
  get lastOrderId(): number {
    return this.s.nextOrderId - 1;
  }

  /** The id of the account's order with that clientOrderId, in any state (the engine keeps them all). */
  orderIdOfClient(account: string, clientOrderId: string): number | undefined {
    return this.s.clientOrders.get(account.toLowerCase() + '\n' + clientOrderId)?.orderId;
  }

  get feeAccountAddress(): string {
    return this.s.feeAccount.address;
  }

  instrument(symbol: string): InstrumentSpec | undefined {
    return this.s.instruments.get(symbol)?.spec;
  }

  instrumentList(): InstrumentSpec[] {
    return [...this.s.instruments.values()].map((i) => i.spec);
  }

  /** Mark, index and last trade prices (0 = never set), with when the mark and index were set. */
  prices(symbol: string):
    | { markPriceTicks: number; indexPriceTicks: number; markTs: number; indexTs: number; lastTradePriceTicks: number; lastFundingTs: number; lastFundingRateE9: bigint }
    | undefined {
    const inst = this.s.instruments.get(symbol);
    if (inst === undefined) return undefined;
    return {
      markPriceTicks: inst.markTicks, indexPriceTicks: inst.indexTicks, markTs: inst.markTs, indexTs: inst.indexTs,
      lastTradePriceTicks: inst.lastTradeTicks, lastFundingTs: inst.lastFundingTs, lastFundingRateE9: inst.lastFundingRateE9,
    };
  }

  /** Whether the split with this corporate action id was applied to the instrument. */
  splitApplied(symbol: string, actionId: string): boolean {
    return this.s.instruments.get(symbol)?.splits.has(actionId) ?? false;
  }

  /** Whether the last mark command said the underlying's market was open (the narrower band is in force). */
  marketOpen(symbol: string): boolean | undefined {
    const inst = this.s.instruments.get(symbol);
    return inst === undefined ? undefined : !inst.marketClosed;
  }

  /** Whether liquidation may act on the instrument at `ts` (a mark, and an index no older than indexStaleMs). */
  liquidationActive(symbol: string, ts: number): boolean {
    const inst = this.s.instruments.get(symbol);
    return inst !== undefined && indexFresh(inst, ts);
  }

  bestBidAsk(symbol: string): { bidTicks: number | undefined; askTicks: number | undefined } | undefined {
    const inst = this.s.instruments.get(symbol);
    if (inst === undefined) return undefined;
    return { bidTicks: inst.book.bestBid(), askTicks: inst.book.bestAsk() };
  }

  /** Open interest in lots: the sum of the long positions (equal to the shorts). A read, never on the command path. */
  openInterest(symbol: string): number | undefined {
    const inst = this.s.instruments.get(symbol);
    if (inst === undefined) return undefined;
    let lots = 0;
    for (const p of inst.positions) if (p.sizeLots > 0) lots += p.sizeLots;
    return lots;
  }

  /** Aggregated book, best first: `[priceTicks, lots]`. */
  depth(symbol: string, levels = 50): { bids: Array<[number, number]>; asks: Array<[number, number]> } | undefined {
    return this.s.instruments.get(symbol)?.book.depth(levels);
  }

  /** Untriggered trigger orders waiting on the instrument (a read for tests and the bench). */
  waitingTriggers(symbol: string): number {
    return this.s.instruments.get(symbol)?.triggers.size ?? 0;
  }

  /** An open order: resting, or an untriggered trigger order (done orders live in the journal, not here). */
  getOrder(orderId: number): OrderView | undefined {
    const o = this.s.openOrder(orderId);
    return o === undefined ? undefined : orderView(o);
  }

  /** The account's resting orders in placement order. */
  openOrders(account: string, symbol?: string): OrderView[] {
    const acct = this.s.accounts.get(account.toLowerCase());
    const out: OrderView[] = [];
    if (acct === undefined) return out;
    for (let o = acct.ordersHead; o !== null; o = o.accNext) {
      if (symbol === undefined || o.position.inst.spec.symbol === symbol) out.push(orderView(o));
    }
    return out;
  }

  getAccount(account: string): AccountView | undefined {
    const acct = this.s.accounts.get(account.toLowerCase());
    if (acct === undefined) return undefined;
    const positions: PositionView[] = [];
    for (const p of acct.positions.values()) {
      const { upnl, notional } = p.sizeLots === 0 ? { upnl: 0n, notional: 0n } : valuation(p);
      positions.push({
        symbol: p.inst.spec.symbol, sizeLots: p.sizeLots, entryNotional: p.entryNotional, isolatedMargin: p.isolatedMargin,
        marginMode: p.mode, leverage: p.leverage, realisedPnl: p.realisedPnl, funding: p.funding, unrealisedPnl: upnl,
        initialMargin: initialMargin(p, notional), maintenanceMargin: maintenanceMargin(p, notional),
      });
    }
    positions.sort((a, b) => (a.symbol < b.symbol ? -1 : 1));
    return {
      account: acct.address, collateral: acct.collateral, reserved: acct.reserved, deposited: acct.deposited, withdrawn: acct.withdrawn,
      realisedPnl: acct.realisedPnl, feesPaid: acct.feesPaid, feesReceived: acct.feesReceived, funding: acct.funding,
      pendingWithdrawals: acct.pendingWithdrawals, liquidationFees: acct.liquidationFees, badDebt: acct.badDebt, liquidity: acct.liquidity, positions,
    };
  }

  /** Every account the engine holds, the venue's own included (a read for the stream seed, never on the command path). */
  accountAddresses(): string[] {
    return [...this.s.accounts.keys()];
  }

  /**
   * What the vault took from the account (deposits credited) and paid it (withdrawals confirmed
   * paid, and reversals of reorged credits), in collateral-token units: the flows a reserves leaf
   * commits for the vault's escape hatch.
   */
  vaultFlows(account: string): { deposited: bigint; withdrawn: bigint } | undefined {
    const acct = this.s.accounts.get(account.toLowerCase());
    return acct === undefined ? undefined : { deposited: acct.deposited, withdrawn: acct.withdrawn };
  }

  marginSummary(account: string): MarginSummary | undefined {
    const acct = this.s.accounts.get(account.toLowerCase());
    return acct === undefined ? undefined : marginSummary(acct);
  }

  /** Accounts holding a position on the symbol (the ADL queue's candidates): a read for tests and tools. */
  positionsOn(symbol: string): Array<{ account: string; sizeLots: number }> {
    const inst = this.s.instruments.get(symbol);
    if (inst === undefined) return [];
    const out: Array<{ account: string; sizeLots: number }> = [];
    for (const p of inst.positions) if (p.sizeLots !== 0 && p.account !== null) out.push({ account: p.account.address, sizeLots: p.sizeLots });
    return out.sort((a, b) => (a.account < b.account ? -1 : 1));
  }

  insuranceFund(): InsuranceFundView {
    const fund = this.s.insurance;
    return { balance: fund.collateral, feesReceived: -fund.liquidationFees, badDebtPaid: -fund.badDebt, openBadDebt: [...this.s.badDebtAccounts].sort() };
  }

  pool(): PoolView {
    return { equity: poolEquity(this.s), collateral: this.s.pool.collateral, totalShares: this.s.totalShares, holders: this.s.lps.size };
  }

  /**
   * What each liquidity provider's shares are worth now (shares × pool equity ÷ total, rounded down):
   * the reserves leaves carry them in the provider's own leaf (docs/proof-of-reserves.md).
   */
  lpValues(): Map<string, bigint> {
    const out = new Map<string, bigint>();
    for (const [a, h] of this.s.lps) if (h.shares > 0n) out.set(a, valueOf(this.s, h.shares));
    return out;
  }

  lpPosition(account: string): LpView | undefined {
    const a = account.toLowerCase();
    const h = this.s.lps.get(a);
    if (h === undefined) return undefined;
    return { account: a, shares: h.shares, value: valueOf(this.s, h.shares), netDeposited: h.netDeposited, lockedUntil: h.lockedUntil };
  }

  withdrawal(withdrawalId: string): { withdrawalId: string; account: string; amount: bigint; status: 'PENDING' | 'PAID' | 'FAILED'; requestedTs: number } | undefined {
    const w = this.s.withdrawals.get(withdrawalId);
    return w === undefined ? undefined : { ...w };
  }

  /** Withdrawals reserved and not yet settled, oldest first (for the payment worker). */
  pendingWithdrawals(): Array<{ withdrawalId: string; account: string; amount: bigint; requestedTs: number; forced: boolean }> {
    const out: Array<{ withdrawalId: string; account: string; amount: bigint; requestedTs: number; forced: boolean }> = [];
    for (const id of this.s.pendingWithdrawalIds) {
      const w = this.s.withdrawals.get(id)!;
      out.push({ withdrawalId: w.withdrawalId, account: w.account, amount: w.amount, requestedTs: w.requestedTs, forced: w.forced === true });
    }
    return out.sort((a, b) => a.requestedTs - b.requestedTs || (a.withdrawalId < b.withdrawalId ? -1 : 1));
  }

  /** The dead man's switch deadline of the account (0 = disarmed). */
  cancelAfterDeadline(account: string): number {
    return this.s.accounts.get(account.toLowerCase())?.cancelAfterTs ?? 0;
  }

  // ===========================================================================================
  // Durability.

  /** The complete state, JSON-safe (bigints as decimal strings) and canonical (sorted). */
  snapshot(): EngineSnapshot {
    return snapshotOf(this.s);
  }

  /** sha256 (hex) of the canonical snapshot: equal hashes mean equal states. */
  stateHash(): string {
    return stateHashOf(this.s);
  }

  /** An engine in exactly the state of `snap`. Throws on a snapshot that is not self-consistent. */
  static fromSnapshot(snap: EngineSnapshot): PerpEngine {
    const engine = new PerpEngine({ instruments: [], feeAccount: snap.feeAccount, defaultLeverage: snap.defaultLeverage });
    engine.s = restoreState(snap);
    return engine;
  }
}

function orderView(o: EngineOrder): OrderView {
  return {
    orderId: o.id, account: o.account.address, symbol: o.position.inst.spec.symbol, side: o.side as Side, type: o.type, timeInForce: o.timeInForce,
    priceTicks: o.priceTicks, sizeLots: o.sizeLots, filledLots: o.filledLots, remainingLots: o.remainingLots, reduceOnly: o.reduceOnly,
    clientOrderId: o.clientOrderId, status: o.trigger !== null ? 'UNTRIGGERED' : o.filledLots > 0 ? 'PARTIALLY_FILLED' : 'NEW',
    reserved: o.reservePerLot * BigInt(o.remainingLots), createdTs: o.createdTs,
    ...(o.trigger !== null ? { trigger: { priceTicks: o.trigger.priceTicks, by: o.trigger.by, closePosition: o.trigger.closePosition } } : {}),
  };
}
