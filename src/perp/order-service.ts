/**
 * Trading on the perpetual venue (docs/perp-api.md "Trading"): signed orders in, engine commands
 * out. `build` answers the EIP-712 order a wallet signs (order-typed-data.ts) with a fresh nonce;
 * `submit` checks the signed message (the key's wallet, the signature, the expiry, the instrument's
 * steps), claims its nonce once per account (order-nonce-store.ts) and sends `placeOrder` to the
 * engine under the id `ord:<orderHash>`: the same signed order sent twice is one order, answered
 * twice. Cancels, leverage and margin changes are authorised by the key alone (TRADE permission) and
 * are made idempotent by the request's Idempotency-Key (idempotency.ts): their command id is then
 * `<scope>:<account>:<key>`, so a retry is answered from the journal instead of applied again.
 *
 * Every refusal is an AppError of the API's table; nothing is changed by a refused request except
 * a signed order's nonce once the order reached the engine (a signed order is processed once).
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_ORDER_TTL_MS, defaultTimeInForce, MAX_ORDER_TTL_MS, orderBasicIssue, orderExpiryIssue, type CancelAllAfterStatus, type OrderInput, type SubmittedOrder } from '@tokex/contract';
import type { Address } from 'viem';
import { AppError, ConflictError, NotFoundError, notListed, RejectedError, StorageUnavailableError, ValidationError } from '../errors/app-error.ts';
import type { AuthKey } from '../auth/api-key-service.ts';
import type { Db } from '../storage/database.ts';
import type { TypedDataDomain } from '../chain/typed-data.ts';
import { parseDecimal } from '../lib/decimal.ts';
import { decimalToSteps, COLLATERAL_DECIMALS, type InstrumentSpec } from './engine/instruments.ts';
import type {
  AdjustMarginCommand,
  CancelAllAfterCommand,
  CancelAllCommand,
  CancelOrderCommand,
  CancelOrdersCommand,
  CommandResult,
  MarginMode,
  OrderAcceptedEvent,
  OrderDoneEvent,
  OrderType,
  OrderView,
  PlaceOrderAccepted,
  PlaceOrderCommand,
  SetLeverageCommand,
  Side,
  TimeInForce,
} from './engine/engine-types.ts';
import { commandIdFor, submitOnce, unknownOutcomeData } from './idempotency.ts';
import { engineError, readYourWrites, walletOf } from './venue-calls.ts';
import { orderType, type OrderMessage } from './order-typed-data.ts';
import { MAX_CANCEL_AFTER_MS, MIN_CANCEL_AFTER_MS } from './engine/perp-engine.ts';
import { createOrderNonceClaimer } from './store/order-nonce-store.ts';
import { assertSessionSigner } from './one-click-service.ts';
import { getOrder, listTrades } from './store/perp-history-store.ts';
import type { PerpVenue } from './perp-venue.ts';
import { averagePrice, fillBody, openOrderBody, orderBody, positionBody, priceOf, sizeOf, takerFill, usd, type OrderBody, type PositionBody } from './perp-views.ts';

export type BuildOrderInput = OrderInput;

/** What the submitting route asks of the order beyond being valid. */
export type SubmitMode = 'order' | 'fill' | 'close';

export interface OrderService {
  build(caller: AuthKey, input: BuildOrderInput): { typedData: ReturnType<typeof orderType.build>; orderHash: string };
  submit(caller: AuthKey, body: { message: unknown; signature: unknown }, mode?: SubmitMode): Promise<SubmittedOrder>;
  // The key-authorised calls take the request's Idempotency-Key (idempotency.ts): with one, a retry
  // is answered as the first request and applies nothing again; without one, each call is new.
  cancel(caller: AuthKey, orderId: string, idempotencyKey?: string): Promise<OrderBody>;
  batchCancel(
    caller: AuthKey,
    input: { orderIds?: string[]; symbol?: string },
    idempotencyKey?: string,
  ): Promise<{ canceled: string[]; failed: Array<{ orderId: string; code: string; msg: string }> }>;
  adjust(caller: AuthKey, input: { symbol: string; leverage: number; marginMode?: MarginMode }, idempotencyKey?: string): Promise<PositionBody>;
  margin(caller: AuthKey, input: { symbol: string; amount: string }, idempotencyKey?: string): Promise<PositionBody>;
  /**
   * The dead man's switch (docs/perp-risk.md): every open order of the account is cancelled at the
   * first mark update `timeoutMs` from now unless armed again; 0 disarms.
   */
  cancelAllAfter(caller: AuthKey, input: { timeoutMs: number }, idempotencyKey?: string): Promise<CancelAllAfterStatus>;
}

/** An order id as the API shows it (a decimal string); anything else names no order. */
function parseOrderId(raw: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw new NotFoundError('order');
  return Number(raw);
}

export function createOrderService(opts: { db: Db; venue: PerpVenue; domain: TypedDataDomain; now?: () => number }): OrderService {
  const { db, venue, domain } = opts;
  const now = opts.now ?? Date.now;

  const { submit, once } = readYourWrites(db, venue);
  // Used nonces are written in group commits (one transaction for the orders of a turn), and rows
  // a day past their order's expiry are pruned, as the single claims did.
  const nonces = createOrderNonceClaimer(db, { retentionMs: 24 * 60 * 60_000, now });

  const spec = (symbol: string): InstrumentSpec => {
    const s = venue.engine().instrument(symbol);
    if (s === undefined) throw new NotFoundError('symbol', { reason: notListed(String(symbol)) });
    return s;
  };

  /** The engine command of an order message, every field checked against the instrument. */
  const commandOf = (m: Pick<OrderMessage, 'symbol' | 'side' | 'orderType' | 'size' | 'price' | 'timeInForce' | 'reduceOnly' | 'clientOrderId'>, prefix: string) => {
    const s = spec(m.symbol);
    // The stateless rules are the contract's (the clients refuse the same before sending); the
    // signed message names the type `orderType`.
    const issue = orderBasicIssue({ side: m.side, type: m.orderType, size: m.size, price: m.price, timeInForce: m.timeInForce, clientOrderId: m.clientOrderId });
    if (issue) throw new ValidationError(`${prefix}${prefix && issue.field === 'type' ? 'orderType' : issue.field}`, issue.reason);
    const lots = decimalToSteps(m.size, s.lotSize);
    if (lots === null) throw new RejectedError('SIZE_OUT_OF_RANGE', `size: ${m.size} is not a multiple of the lot size ${s.lotSize}`);
    if (lots < s.minSizeLots || lots > s.maxSizeLots) {
      throw new RejectedError('SIZE_OUT_OF_RANGE', `size: ${m.size} is outside ${s.symbol}'s sizes ${sizeOf(s, s.minSizeLots)} to ${sizeOf(s, s.maxSizeLots)}`);
    }
    let priceTicks: number | undefined;
    if (m.price !== '') {
      const ticks = decimalToSteps(m.price, s.tickSize);
      if (ticks === null) throw new RejectedError('PRICE_OUT_OF_RANGE', `price: ${m.price} is off the tick: not a multiple of the tick size ${s.tickSize}`);
      if (ticks <= 0 || ticks > s.maxPriceTicks) {
        throw new RejectedError('PRICE_OUT_OF_RANGE', `price: ${m.price} is outside ${s.symbol}'s prices ${priceOf(s, 1)} to ${priceOf(s, s.maxPriceTicks)}`);
      }
      priceTicks = ticks;
    }
    const cmd: Omit<PlaceOrderCommand, 'id' | 'ts' | 'account'> = {
      kind: 'placeOrder',
      symbol: s.symbol,
      side: m.side as Side,
      type: m.orderType as OrderType,
      sizeLots: lots,
      timeInForce: m.timeInForce as TimeInForce,
      reduceOnly: m.reduceOnly,
      ...(priceTicks !== undefined ? { priceTicks } : {}),
      ...(m.clientOrderId !== '' ? { clientOrderId: m.clientOrderId } : {}),
    };
    return { spec: s, cmd };
  };

  /** The order's current state: resting in the engine, else its history row. */
  const currentOrder = async (s: InstrumentSpec, orderId: number): Promise<OrderBody | undefined> => {
    const history = await getOrder(db, orderId);
    const live = venue.engine().getOrder(orderId);
    if (live) return openOrderBody(s, live, history);
    return history ? orderBody(s, history) : undefined;
  };

  const answer = async (s: InstrumentSpec, r: PlaceOrderAccepted & { resubmitted?: true }, cmd: Omit<PlaceOrderCommand, 'id' | 'ts' | 'account'>): Promise<SubmittedOrder> => {
    const o = r.order;
    if (r.duplicate || r.resubmitted === true) {
      // An order placed before: as it stands now, with its fills so far (the history may lag the
      // engine by a batch, so an order done a moment ago can miss there: it is then answered as the
      // engine answered it).
      const current = await currentOrder(s, o.orderId);
      const fills = (await listOrderFills(o.orderId)).map((t) => fillBody(s, t));
      if (current) return { ...current, fills, duplicate: true };
    }
    let notional = 0n;
    let fee = 0n;
    for (const e of r.fills) {
      notional += e.notional;
      fee += e.takerFee;
    }
    // The order's own event; a repeat whose order the history does not hold yet has none, and is
    // answered with the fields it was sent with.
    const accepted = r.events.find((e): e is OrderAcceptedEvent => e.type === 'orderAccepted' && e.orderId === o.orderId);
    const done = r.events.find((e): e is OrderDoneEvent => e.type === 'orderDone' && e.orderId === o.orderId);
    const ts = accepted?.ts ?? now();
    const priceTicks = accepted ? accepted.priceTicks : (cmd.priceTicks ?? null);
    return {
      orderId: String(o.orderId),
      clientOrderId: accepted ? accepted.clientOrderId : (cmd.clientOrderId ?? null),
      symbol: s.symbol,
      side: accepted?.side ?? cmd.side,
      type: accepted?.orderType ?? cmd.type,
      timeInForce: accepted?.timeInForce ?? cmd.timeInForce ?? (cmd.type === 'MARKET' ? 'IOC' : 'GTC'),
      price: priceTicks === null ? null : priceOf(s, priceTicks),
      size: sizeOf(s, o.sizeLots),
      filledSize: sizeOf(s, o.filledLots),
      remainingSize: sizeOf(s, o.remainingLots),
      avgPrice: averagePrice(s, notional, o.filledLots),
      fee: usd(fee),
      status: o.status,
      reason: done?.reason ?? null,
      reduceOnly: accepted?.reduceOnly ?? cmd.reduceOnly ?? false,
      createdAt: ts,
      updatedAt: ts,
      fills: r.fills.map((e) => takerFill(s, e)),
      duplicate: r.duplicate || r.resubmitted === true,
    };
  };

  async function listOrderFills(orderId: number) {
    const order = await getOrder(db, orderId);
    if (!order) return [];
    return (await listTrades(db, { account: order.account, orderId, offset: 0, limit: 1_000 })).rows.reverse();
  }

  return {
    build(caller, input) {
      const account = walletOf(caller);
      const t = now();
      const expiry = input.expiry ?? t + DEFAULT_ORDER_TTL_MS;
      const late = orderExpiryIssue(expiry, t);
      if (late) throw new ValidationError(late.field, late.reason);
      const message = {
        account: account as Address,
        symbol: input.symbol,
        side: input.side,
        orderType: input.type,
        size: input.size,
        price: input.price ?? '',
        timeInForce: input.timeInForce ?? defaultTimeInForce(input.type),
        reduceOnly: input.reduceOnly ?? false,
        clientOrderId: input.clientOrderId ?? '',
        // 63 random bits: fresh per build, and far below uint64's range.
        nonce: BigInt(`0x${randomBytes(8).toString('hex')}`) >> 1n,
        expiry: BigInt(expiry),
      };
      commandOf(message, '');
      return { typedData: orderType.build(domain, message), orderHash: orderType.hash(domain, message) };
    },

    async submit(caller, body, mode = 'order') {
      const account = walletOf(caller);
      const m = orderType.parseMessage(body.message) as unknown as OrderMessage;
      if (m.account.toLowerCase() !== account) throw new ValidationError('message.account', 'must be the wallet of the API key');
      const { spec: s, cmd } = commandOf(m, 'message.');
      if (mode === 'fill' && (cmd.timeInForce !== 'IOC' && cmd.timeInForce !== 'FOK')) throw new ValidationError('message.timeInForce', 'must be IOC or FOK for a fill');
      if (mode === 'fill' && cmd.priceTicks === undefined) throw new ValidationError('message.price', 'a fill needs a worst price');
      if (mode === 'close') {
        if (!m.reduceOnly) throw new ValidationError('message.reduceOnly', 'must be true to close a position');
        const held = venue.engine().getAccount(account)?.positions.find((p) => p.symbol === s.symbol)?.sizeLots ?? 0;
        if (held === 0) throw new RejectedError('POSITION_NOT_OPEN', `no open ${s.symbol} position to close`);
      }
      // Hashed once: the digest is both what the signature covers and the order's id.
      const orderHash = orderType.hash(domain, m as unknown as Record<string, unknown>);
      const signer = await orderType.recoverSigner(domain, m as unknown as Record<string, unknown>, body.signature, orderHash);
      if (signer.toLowerCase() !== account) await assertSessionSigner(db, { account, signer, orderExpiry: m.expiry, now: now() });
      const t = now();
      if (m.expiry < BigInt(t)) throw new RejectedError('ORDER_EXPIRED', 'the signed order has expired; build and sign a new one');
      if (m.expiry > BigInt(t + MAX_ORDER_TTL_MS)) throw new ValidationError('message.expiry', 'must be at most 30 days ahead');
      const claim = await nonces.claim({ account, nonce: m.nonce.toString(), orderHash, expiry: Number(m.expiry), usedAt: t });
      if (claim === 'used') throw new RejectedError('NONCE_USED', 'message.nonce: already used by another order of this account');
      const r = (await submit({ ...cmd, id: `ord:${orderHash}`, ts: t, account, expiresAtMs: Number(m.expiry) })) as CommandResult & { resubmitted?: true };
      if (!r.ok) throw engineError(r, undefined, s);
      return answer(s, r as PlaceOrderAccepted & { resubmitted?: true }, cmd);
    },

    async cancel(caller, rawId, idempotencyKey) {
      const account = walletOf(caller);
      const orderId = parseOrderId(rawId);
      const cmd: CancelOrderCommand = { kind: 'cancelOrder', id: commandIdFor('cancel', account, idempotencyKey), ts: now(), account, orderId };
      let live: OrderView | undefined;
      // State checks run for a new request only: the retry of a cancel that went through finds the
      // order done, and is answered the cancel instead.
      const { result: r, appliedAt } = await submitOnce(once, cmd, idempotencyKey, async () => {
        live = venue.engine().getOrder(orderId);
        if (live) {
          if (live.account !== account) throw new NotFoundError('order');
          return;
        }
        // Not in this instance's engine view. With the engine in another process that view is a
        // replica, a moment behind: an order placed through another instance may be open without
        // being here yet. Only a done order is refused here; anything else goes to the engine,
        // which owns the answer (no such order of this account, or not open).
        const history = await getOrder(db, orderId);
        if (history && history.account !== account) throw new NotFoundError('order');
        if (history && history.status !== 'NEW' && history.status !== 'PARTIALLY_FILLED') throw new RejectedError('ORDER_NOT_OPEN', `order ${orderId} is ${history.status}`);
      });
      if (!r.ok) throw engineError(r);
      // The cancel's own time, the same on a retry (the journalled one).
      const canceled = { status: 'CANCELED' as const, reason: 'USER_CANCEL', remainingSize: '0', updatedAt: appliedAt };
      if (live) {
        let history;
        try {
          history = await getOrder(db, orderId);
        } catch (err) {
          // Cancelled, but the answer cannot be read: the retry with the key answers it.
          throw new StorageUnavailableError({ cause: err, data: unknownOutcomeData(idempotencyKey !== undefined) });
        }
        return { ...openOrderBody(spec(live.symbol), live, history), ...canceled };
      }
      const history = await projectedOrder(orderId);
      return { ...orderBody(spec(history.symbol), history), ...canceled };
    },

    async batchCancel(caller, input, idempotencyKey) {
      const account = walletOf(caller);
      const hasIds = input.orderIds !== undefined;
      if (hasIds === (input.symbol !== undefined)) throw new ValidationError('orderIds', 'give either orderIds or symbol, not both');
      if (input.symbol !== undefined) {
        spec(input.symbol);
        const cmd: CancelAllCommand = { kind: 'cancelAll', id: commandIdFor('batch-cancel', account, idempotencyKey), ts: now(), account, symbol: input.symbol };
        const { result: r } = await submitOnce(once, cmd, idempotencyKey);
        if (!r.ok) {
          if (r.code === 'UNKNOWN_ACCOUNT') return { canceled: [], failed: [] };
          throw engineError(r);
        }
        return { canceled: ('canceledOrderIds' in r ? r.canceledOrderIds : []).map(String), failed: [] };
      }
      const ids = input.orderIds!;
      const valid: number[] = [];
      const failed: Array<{ orderId: string; code: string; msg: string }> = [];
      for (const raw of ids) {
        if (/^[1-9][0-9]{0,15}$/.test(raw)) valid.push(Number(raw));
        else failed.push({ orderId: raw, code: 'ORDER_NOT_FOUND', msg: 'no such order for this account' });
      }
      if (valid.length === 0) return { canceled: [], failed };
      const cmd: CancelOrdersCommand = { kind: 'cancelOrders', id: commandIdFor('batch-cancel', account, idempotencyKey), ts: now(), account, orderIds: valid };
      const { result: r } = await submitOnce(once, cmd, idempotencyKey);
      if (!r.ok) {
        if (r.code !== 'UNKNOWN_ACCOUNT') throw engineError(r);
        return { canceled: [], failed: failed.concat(valid.map((id) => ({ orderId: String(id), code: 'ORDER_NOT_FOUND', msg: 'no such order for this account' }))) };
      }
      const canceled: string[] = [];
      for (const c of 'cancels' in r ? r.cancels : []) {
        if (c.code === 'OK') canceled.push(String(c.orderId));
        else failed.push({ orderId: String(c.orderId), code: c.code, msg: c.code === 'ORDER_NOT_OPEN' ? 'the order is no longer open' : 'no such order for this account' });
      }
      return { canceled, failed };
    },

    async adjust(caller, input, idempotencyKey) {
      const account = walletOf(caller);
      const s = spec(input.symbol);
      if (!Number.isSafeInteger(input.leverage) || input.leverage < 1) throw new ValidationError('leverage', 'must be a whole number from 1');
      if (input.leverage > s.maxLeverage) throw new RejectedError('LEVERAGE_EXCEEDED', `leverage: at most ${s.maxLeverage} on ${s.symbol}`);
      const cmd: SetLeverageCommand = {
        kind: 'setLeverage', id: commandIdFor('leverage', account, idempotencyKey), ts: now(), account, symbol: s.symbol, leverage: input.leverage,
        ...(input.marginMode !== undefined ? { marginMode: input.marginMode } : {}),
      };
      const { result: r } = await submitOnce(once, cmd, idempotencyKey);
      if (!r.ok) throw engineError(r, 'INSUFFICIENT_BALANCE');
      return position(s, account);
    },

    async margin(caller, input, idempotencyKey) {
      const account = walletOf(caller);
      const s = spec(input.symbol);
      const negative = typeof input.amount === 'string' && input.amount.startsWith('-');
      const magnitude = parseDecimal(negative ? input.amount.slice(1) : input.amount, { field: 'amount', decimals: COLLATERAL_DECIMALS });
      const cmd: AdjustMarginCommand = { kind: 'adjustMargin', id: commandIdFor('margin', account, idempotencyKey), ts: now(), account, symbol: s.symbol, amount: negative ? -magnitude : magnitude };
      const { result: r } = await submitOnce(once, cmd, idempotencyKey);
      if (!r.ok) throw engineError(r, 'POSITION_NOT_OPEN');
      return position(s, account);
    },

    async cancelAllAfter(caller, input, idempotencyKey) {
      const account = walletOf(caller);
      const t = input.timeoutMs;
      if (!Number.isSafeInteger(t) || (t !== 0 && (t < MIN_CANCEL_AFTER_MS || t > MAX_CANCEL_AFTER_MS))) {
        throw new ValidationError('timeoutMs', `must be 0 (disarm) or from ${MIN_CANCEL_AFTER_MS} to ${MAX_CANCEL_AFTER_MS} ms`);
      }
      const cmd: CancelAllAfterCommand = { kind: 'cancelAllAfter', id: commandIdFor('cancel-after', account, idempotencyKey), ts: now(), account, timeoutMs: t };
      const { result: r, appliedAt } = await submitOnce(once, cmd, idempotencyKey);
      if (!r.ok) throw engineError(r, 'UNKNOWN_ACCOUNT');
      // The engine's deadline is the command's time plus the timeout: the first request's on a retry.
      return t === 0 ? { armed: false, deadline: null, timeoutMs: 0 } : { armed: true, deadline: appliedAt + t, timeoutMs: t };
    },
  };

  /**
   * An order a journalled cancel finished, as the history holds it. The projector writes about one
   * batch behind the engine, so a retry arriving at once may wait for it a moment.
   */
  async function projectedOrder(orderId: number) {
    for (let waited = 0; ; waited += 50) {
      // This retry changed nothing (the first request did): a failed read is a plain 50002.
      const o = await getOrder(db, orderId).catch((err: unknown) => {
        throw new StorageUnavailableError({ cause: err });
      });
      if (o) return o;
      if (waited >= 2_000) throw new AppError('STORAGE_UNAVAILABLE', 'perp history: the cancelled order is not readable yet, try again', { retryable: true });
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  function position(s: InstrumentSpec, account: string): PositionBody {
    const engine = venue.engine();
    const a = engine.getAccount(account)!;
    const p = a.positions.find((x) => x.symbol === s.symbol);
    if (!p) throw new NotFoundError('position');
    return positionBody(s, p, a, engine.prices(s.symbol)!.markPriceTicks || engine.prices(s.symbol)!.lastTradePriceTicks);
  }
}
