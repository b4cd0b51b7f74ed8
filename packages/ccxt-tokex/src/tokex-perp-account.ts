/**
 * The CCXT class's account (tokex-perp.ts): balance, positions, leverage and margin mode, margin
 * transfers, and the funding of the account (withdrawals signed by the wallet, deposits, ledger).
 */
import { randomUUID } from 'node:crypto';
import {
  Precise,
  ArgumentsRequired,
  AuthenticationError,
  BadRequest,
  ExchangeError,
  InvalidAddress,
} from 'ccxt';
import type {
  Balances,
  Currency,
  Dict,
  Int,
  LedgerEntry,
  MarginModification,
  Market,
  Position,
  Str,
  Strings,
  Transaction,
} from 'ccxt';
import { PAGE_MAX, type Json } from './tokex-perp-base.ts';
import { TokexPerpMarkets } from './tokex-perp-markets.ts';

/** Balance, positions, leverage and margin, and the collateral's movements: withdrawals, deposits, the ledger. */
export class TokexPerpAccount extends TokexPerpMarkets {
  // ---------------------------------------------------------------- account

  override async fetchBalance(params: Dict = {}): Promise<Balances> {
    const data = await this.call('GET', 'account', params);
    return this.parseBalance(data);
  }

  override parseBalance(a: Json): Balances {
    const code = this.safeCurrencyCode(this.safeString(a, 'asset', this.collateralCode())) as string;
    const total = this.safeString(a, 'equity');
    const free = this.safeString(a, 'freeCollateral');
    const result: Dict = { info: a };
    // Like Binance's futures balance: total is the margin balance (equity), free what orders may use.
    result[code] = { free, used: Precise.stringSub(total, free), total };
    return this.safeBalance(result);
  }

  override async fetchPositions(symbols: Strings = undefined, params: Dict = {}): Promise<Position[]> {
    await this.loadMarkets();
    const request: Dict = { limit: PAGE_MAX };
    if (symbols !== undefined && symbols.length === 1) request['symbol'] = this.marketId(symbols[0]);
    const data = await this.call('GET', 'positions', this.extend(request, params));
    const rows = (this.safeList(data, 'rows', []) as Json[]).filter((p) => this.safeString(p, 'side') !== 'FLAT');
    const positions = rows.map((p) => this.parsePosition(p));
    return this.filterByArrayPositions(positions, 'symbol', symbols, false);
  }

  /**
   * A position is the engine's live state when the venue answers (REST or stream): its values are
   * those of that moment, so `timestamp` is when the answer arrived (the venue's row has no time of
   * its own; a `ts` in the row would be taken).
   */
  override parsePosition(p: Dict, market: Market = undefined): Position {
    const marketId = this.safeString(p, 'symbol');
    market = this.safeMarket(marketId, market);
    const ts = this.safeInteger(p, 'ts') ?? this.milliseconds();
    const notional = this.safeString(p, 'notional');
    const margin = this.safeString(p, 'margin');
    const maintenance = this.safeString(p, 'maintenanceMargin');
    const ratio = (a: Str, b: Str) => (a === undefined || b === undefined || !Precise.stringGt(b, '0') ? undefined : this.parseNumber(Precise.stringDiv(a, b, 8)));
    return this.safePosition({
      info: p,
      id: undefined,
      symbol: market.symbol,
      timestamp: ts,
      datetime: this.iso8601(ts),
      isolated: this.safeString(p, 'marginMode') === 'isolated',
      hedged: false,
      side: this.safeStringLower(p, 'side'),
      contracts: this.safeNumber(p, 'size'),
      contractSize: this.parseNumber('1'),
      entryPrice: this.safeNumber(p, 'entryPrice'),
      markPrice: this.safeNumber(p, 'markPrice'),
      notional: this.safeNumber(p, 'notional'),
      leverage: this.safeNumber(p, 'leverage'),
      collateral: this.safeNumber(p, 'margin'),
      initialMargin: this.safeNumber(p, 'margin'),
      maintenanceMargin: this.safeNumber(p, 'maintenanceMargin'),
      // Of the notional, as CCXT defines them.
      initialMarginPercentage: ratio(margin, notional),
      maintenanceMarginPercentage: ratio(maintenance, notional),
      unrealizedPnl: this.safeNumber(p, 'unrealisedPnl'),
      realizedPnl: this.safeNumber(p, 'realisedPnl'),
      liquidationPrice: this.safeNumber(p, 'liquidationPrice'),
      marginMode: this.safeString(p, 'marginMode'),
      // Maintenance margin / the collateral backing it: an isolated position's own margin; a cross
      // position is backed by the whole account (GET account's marginRatio), so none here.
      marginRatio: this.safeString(p, 'marginMode') === 'isolated' ? ratio(maintenance, margin) : undefined,
      percentage: undefined,
      lastUpdateTimestamp: undefined,
      lastPrice: undefined,
      stopLossPrice: undefined,
      takeProfitPrice: undefined,
    });
  }

  override async setLeverage(leverage: number, symbol: Str = undefined, params: Dict = {}): Promise<{}> {
    if (symbol === undefined) throw new ArgumentsRequired(`${this.id} setLeverage() requires a symbol argument`);
    await this.loadMarkets();
    const market = this.market(symbol);
    if (!Number.isInteger(leverage) || leverage < 1) throw new BadRequest(`${this.id} setLeverage() leverage must be a whole number from 1`);
    const [headers, rest] = this.idempotent(params);
    const request: Dict = { symbol: market.id, leverage };
    const data = await this.call('POST', 'positions/adjust', this.extend(request, rest), 'private', headers);
    this.rememberLeverage(market.symbol, this.safeInteger(data, 'leverage', leverage) as number);
    return data;
  }

  override async setMarginMode(marginMode: string, symbol: Str = undefined, params: Dict = {}): Promise<{}> {
    if (symbol === undefined) throw new ArgumentsRequired(`${this.id} setMarginMode() requires a symbol argument`);
    const mode = marginMode.toLowerCase();
    if (mode !== 'cross' && mode !== 'isolated') throw new BadRequest(`${this.id} setMarginMode() marginMode must be cross or isolated`);
    await this.loadMarkets();
    const market = this.market(symbol);
    // positions/adjust sets leverage and mode together: keep the leverage the account has.
    let leverage = this.safeInteger(params, 'leverage');
    if (leverage === undefined) {
      const positions = await this.fetchPositions([market.symbol]);
      leverage = positions.length > 0 ? positions[0].leverage : this.safeInteger(this.safeDict(this.options, 'leverages', {}), market.symbol);
    }
    if (leverage === undefined) {
      const max = this.safeInteger(market.limits.leverage, 'max', 10) as number;
      leverage = Math.min(10, max);
    }
    const [headers, rest] = this.idempotent(this.omit(params, 'leverage'));
    const request: Dict = { symbol: market.id, leverage, marginMode: mode };
    const data = await this.call('POST', 'positions/adjust', this.extend(request, rest), 'private', headers);
    this.rememberLeverage(market.symbol, leverage as number);
    return data;
  }

  private rememberLeverage(symbol: string, leverage: number): void {
    const leverages = this.safeDict(this.options, 'leverages', {}) as Dict;
    leverages[symbol] = leverage;
    this.options['leverages'] = leverages;
  }

  override async addMargin(symbol: string, amount: number, params: Dict = {}): Promise<MarginModification> {
    return this.modifyMargin(symbol, this.numberToString(amount), 'add', params);
  }

  override async reduceMargin(symbol: string, amount: number, params: Dict = {}): Promise<MarginModification> {
    return this.modifyMargin(symbol, Precise.stringNeg(this.numberToString(amount)) as string, 'reduce', params);
  }

  private async modifyMargin(symbol: string, amount: string, type: 'add' | 'reduce', params: Dict): Promise<MarginModification> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const [headers, rest] = this.idempotent(params);
    const data = await this.call('POST', 'positions/margin', this.extend({ symbol: market.id, amount }, rest), 'private', headers);
    return {
      info: data,
      symbol: market.symbol,
      type,
      marginMode: 'isolated',
      amount: this.parseNumber(Precise.stringAbs(amount)),
      total: this.safeNumber(data, 'margin'),
      code: this.collateralCode(),
      status: 'ok',
      timestamp: undefined,
      datetime: undefined,
    } as MarginModification;
  }

  // ---------------------------------------------------------------- funding of the account

  /** What a withdrawal may name: the collateral only (USDC, or USD, the venue's dollar paid 1:1 in it). */
  private checkCode(code: Str): void {
    if (code !== undefined && code !== null && !['USDC', 'USD'].includes(code.toUpperCase())) {
      throw new BadRequest(`${this.id} the only collateral is ${this.collateralCode()} (USD 1:1), not ${code}`);
    }
  }

  /**
   * Whether a list asked for `code` holds the account's money movements. The venue has one
   * collateral: no code, `USDC` or `USD` mean it. Another code of `currencies` (a market's base such
   * as `BTC`, which is never held here) has none: its list is empty. A code CCXT does not know is
   * CCXT's own ExchangeError ("does not have currency code").
   */
  private listsCollateral(code: Str): boolean {
    if (code === undefined || code === null || ['USDC', 'USD'].includes(code.toUpperCase())) return true;
    this.currency(code);
    return false;
  }

  /**
   * Withdraws to the key's own wallet, signed by that wallet (`privateKey`): `account/withdrawals/build`,
   * the wallet's EIP-712 signature of the Withdrawal (checked first to be the one asked for, on the
   * venue's chain), then `POST account/withdrawals` with it; the margin vault pays only against it.
   * `params.clientWithdrawalId` names the withdrawal (default a new UUID): calling again with it answers
   * the same withdrawal. `params.deadline` (unix seconds, 300 s to 7 days ahead; default a day) bounds
   * when the vault may still pay it.
   */
  override async withdraw(code: string, amount: number, address: string, tag: Str = undefined, params: Dict = {}): Promise<Transaction> {
    this.checkCode(code);
    await this.loadMarkets();
    const payee = this.walletAddress || (this.privateKey ? this.wallet().address : undefined);
    // The vault pays only the wallet the key is bound to; the request names no address.
    if (address !== undefined && address !== null && payee !== undefined && address.toLowerCase() !== payee.toLowerCase()) {
      throw new InvalidAddress(`${this.id} withdraw() pays only the key's own wallet ${payee}`);
    }
    const value = this.numberToString(amount);
    const decimals = value.includes('.') ? value.split('.')[1].length : 0;
    if (!Precise.stringGt(value, '0') || decimals > 6) throw new BadRequest(`${this.id} withdraw() amount must be above zero with at most 6 decimals`);
    // The wallet signs every withdrawal: without privateKey nothing is asked.
    const wallet = this.wallet();
    const clientWithdrawalId = this.safeString(params, 'clientWithdrawalId') ?? randomUUID();
    const deadline = this.safeInteger(params, 'deadline');
    const request: Dict = { amount: value, clientWithdrawalId };
    if (deadline !== undefined) request['deadline'] = deadline;
    const built = await this.call('POST', 'account/withdrawals/build', this.extend(request, this.omit(params, ['clientWithdrawalId', 'deadline'])));
    const typedData = this.safeDict(built, 'typedData') as Json;
    const message = this.safeDict(typedData, 'message', {}) as Json;
    const account = String(message.account).toLowerCase();
    const domainChain = this.safeString(this.safeDict(typedData, 'domain'), 'chainId');
    if (domainChain !== this.chainId()) throw new ExchangeError(`${this.id} withdraw() the venue built the withdrawal for chain ${domainChain}, not ${this.chainId()}; not signed`);
    if (account !== wallet.address.toLowerCase()) {
      throw new AuthenticationError(`${this.id} the API key is bound to another wallet than privateKey (only that wallet signs its withdrawals; a One-Click session key cannot)`);
    }
    const [whole, fraction = ''] = value.split('.');
    const units = BigInt(whole + fraction.padEnd(6, '0')).toString();
    const asked =
      typedData.primaryType === 'Withdrawal' &&
      String(message.recipient).toLowerCase() === account &&
      String(message.amount) === units &&
      String(message.withdrawalId).toLowerCase() === String(this.safeString(built, 'withdrawalId')).toLowerCase() &&
      /^\d+$/.test(String(message.deadline)) &&
      (deadline === undefined || String(message.deadline) === String(deadline));
    if (!asked) throw new ExchangeError(`${this.id} withdraw() the venue built another withdrawal than the one asked; not signed`);
    const signature = await wallet.signTypedData(typedData);
    const data = await this.call('POST', 'account/withdrawals', { amount: value, clientWithdrawalId, deadline: Number(message.deadline), signature });
    return this.parseTransaction(data);
  }

  override async fetchWithdrawals(code: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Transaction[]> {
    await this.loadMarkets();
    if (!this.listsCollateral(code)) return [];
    const data = await this.call('GET', 'account/withdrawals', this.pageParams({}, since, limit, params));
    const rows = (this.safeList(data, 'rows', []) as Json[]).map((r) => this.parseTransaction(r));
    return this.filterBySinceLimit(this.sortBy(rows, 'timestamp'), since, limit) as Transaction[];
  }

  override async fetchDeposits(code: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Transaction[]> {
    await this.loadMarkets();
    if (!this.listsCollateral(code)) return [];
    const data = await this.call('GET', 'account/deposits', this.pageParams({}, since, limit, params));
    const rows = (this.safeList(data, 'rows', []) as Json[]).map((r) => this.parseTransaction(this.extend(r, { kind: 'deposit' })));
    return this.filterBySinceLimit(this.sortBy(rows, 'timestamp'), since, limit) as Transaction[];
  }

  /** Deposits and withdrawals together, oldest first: `limit` of the newest of both. */
  override async fetchDepositsWithdrawals(code: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Transaction[]> {
    const [deposits, withdrawals] = await Promise.all([this.fetchDeposits(code, since, limit, params), this.fetchWithdrawals(code, since, limit, params)]);
    const rows = this.sortBy(this.arrayConcat(deposits, withdrawals), 'timestamp');
    return this.filterBySinceLimit(rows, since, limit, 'timestamp', true) as Transaction[];
  }

  /**
   * A deposit (the vault's `Deposited` log, `updated` its block time: the venue keeps no other) or a
   * withdrawal (`updated` its last status change; `txid` once the payment is broadcast). `network`
   * is the venue's chain (`options.networksById`); the venue charges no fee on either (the operator
   * pays the payment's gas), so `fee` is 0 USDC.
   */
  override parseTransaction(t: Dict, currency: Currency = undefined): Transaction {
    const isWithdrawal = this.safeString(t, 'kind') !== 'deposit';
    const info = this.omit(t, 'kind');
    const ts = isWithdrawal ? this.safeInteger(t, 'createdAt') : this.safeInteger(t, 'ts');
    const statuses: Dict = isWithdrawal
      ? { PENDING: 'pending', SENT: 'pending', COMPLETED: 'ok', FAILED: 'failed' }
      : { PENDING: 'pending', CREDITED: 'ok', PAID: 'ok', REFUSED: 'failed' };
    const address = this.safeString(t, 'address');
    const code = this.safeCurrencyCode(this.safeString(t, 'asset', this.collateralCode())) as string;
    return {
      info,
      id: isWithdrawal ? this.safeString(t, 'withdrawalId') : this.safeString(t, 'id'),
      txid: this.safeString(t, 'txHash'),
      timestamp: ts,
      datetime: this.iso8601(ts),
      network: this.networkCode(this.chainId()),
      address,
      addressTo: address,
      addressFrom: undefined,
      tag: undefined,
      tagTo: undefined,
      tagFrom: undefined,
      type: isWithdrawal ? 'withdrawal' : 'deposit',
      amount: this.safeNumber(t, 'amount'),
      currency: code,
      status: this.safeString(statuses, this.safeString(t, 'status') as string, 'pending'),
      updated: isWithdrawal ? this.safeInteger(t, 'updatedAt') : ts,
      internal: false,
      comment: this.safeString(t, 'reason'),
      fee: { cost: this.parseNumber('0'), currency: code, rate: undefined },
    } as Transaction;
  }

  override async fetchLedger(code: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<LedgerEntry[]> {
    await this.loadMarkets();
    if (!this.listsCollateral(code)) return [];
    const data = await this.call('GET', 'account/transactions', this.pageParams({}, since, limit, params));
    // The venue lists newest first; reversed before the (stable) sort, movements of one millisecond
    // stay in the venue's order, so each one's `before` is the previous one's `after`.
    const rows = (this.safeList(data, 'rows', []) as Json[]).map((r) => this.parseLedgerEntry(r)).reverse();
    return this.filterBySinceLimit(this.sortBy(rows, 'timestamp'), since, limit) as LedgerEntry[];
  }

  /**
   * A row of `account/transactions`. `account` is the venue's account (the wallet); `after` is the
   * row's `balanceAfter` (the sum of the account's movements up to this one: the balance after it,
   * isolated margins included) and `before` = `after` − the signed amount, so `before + amount =
   * after` for a credit and `before − amount = after` for a debit. Each movement is its own entry,
   * fees too (type `fee`): no fee is charged on a movement itself, so `fee` is 0 USDC.
   */
  override parseLedgerEntry(e: Dict, currency: Currency = undefined): LedgerEntry {
    const amount = this.safeString(e, 'amount', '0') as string;
    const ts = this.safeInteger(e, 'ts');
    // CCXT's ledger types: trade, transaction, margin, cashback, referral, transfer, fee.
    const types: Dict = {
      DEPOSIT: 'transaction',
      WITHDRAWAL: 'transaction',
      WITHDRAWAL_RELEASE: 'transaction',
      FEE: 'fee',
      REALISED_PNL: 'trade',
      FUNDING: 'fee',
      LIQUIDATION_FEE: 'fee',
      LIQUIDATION: 'trade',
      ADL: 'trade',
      // The insurance fund's money covering a negative balance.
      BAD_DEBT: 'transfer',
      LIQUIDITY_ADD: 'transfer',
      LIQUIDITY_REMOVE: 'transfer',
    };
    const venueType = this.safeString(e, 'type') as string;
    const code = this.safeCurrencyCode(this.safeString(e, 'asset', this.collateralCode())) as string;
    const after = this.safeString(e, 'balanceAfter');
    return this.safeLedgerEntry(
      {
        info: e,
        id: this.safeString(e, 'id'),
        timestamp: ts,
        datetime: this.iso8601(ts),
        direction: Precise.stringLt(amount, '0') ? 'out' : 'in',
        account: this.safeString(e, 'account'),
        referenceId: this.safeString(e, 'ref'),
        referenceAccount: undefined,
        type: this.safeString(types, venueType, 'other'),
        currency: code,
        amount: this.parseNumber(Precise.stringAbs(amount)),
        // Both given: safeLedgerEntry would otherwise take the unsigned amount from `after`.
        before: after === undefined ? undefined : Precise.stringSub(after, amount),
        after,
        status: 'ok',
        fee: { cost: '0', currency: code },
      },
      // safeLedgerEntry takes the code from this currency, not from the entry.
      this.safeCurrency(this.safeString(e, 'asset', this.collateralCode())),
    );
  }
}
