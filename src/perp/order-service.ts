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
import { seededUint64, venueSeed } from '../lib/seeded-random.ts';
import {
  DEFAULT_ORDER_TTL_MS, defaultTimeInForce, isTriggerType, MAX_BATCH_ORDERS, OPEN_ORDER_STATUSES, MAX_ORDER_TTL_MS, orderBasicIssue, orderExpiryIssue,
  type AmendInput, type BatchOrderResult, type BatchOrdersResult, type CancelAllAfterStatus, type Order, type OrderInput, type SubmittedOrder,
} from '@tokex/contract';
import type { Address } from 'viem';
import { AppError, ConflictError, isAppError, NotFoundError, notListed, RejectedError, StorageUnavailableError, ValidationError } from '../errors/app-error.ts';
import type { AuthKey } from '../auth/api-key-service.ts';
import type { Db } from '../storage/database.ts';
import type { TypedDataDomain } from '../chain/typed-data.ts';
import { parseDecimal } from '../lib/decimal.ts';
import { COLLATERAL_DECIMALS, type InstrumentSpec } from './engine/instruments.ts';
import type {
  AdjustMarginCommand,
  AmendAccepted,
  CancelAllAfterCommand,
  CancelAllCommand,
  CancelOrderCommand,
  CancelOrdersCommand,
  CommandResult,
  MarginMode,
  OrderAcceptedEvent,
  OrderDoneEvent,
  OrderView,
  PlaceOrderAccepted,
  PlaceOrderCommand,
  SetLeverageCommand,
} from './engine/engine-types.ts';
import { commandIdFor, submitOnce, unknownOutcomeData } from './idempotency.ts';
import { NONCE_USED_MESSAGE, engineError, readYourWrites, walletOf } from './venue-calls.ts';
import { amendOrderType, orderType, triggerOrderType, type AmendMessage, type OrderMessage } from './order-typed-data.ts';
import { perpEnvelope } from './perp-envelope.ts';
import { amendCommandFor, placeCommandOf, type OrderCommandFields } from './order-commands.ts';
import { MAX_CANCEL_AFTER_MS, MIN_CANCEL_AFTER_MS } from './engine/perp-engine.ts';
import { NONCE_RETENTION_MS, createOrderNonceClaimer, type NonceClaimInput } from './store/order-nonce-store.ts';
import { assertSessionSigner } from './one-click-service.ts';
import { getSession, sessionActive } from './store/session-signer-store.ts';
import { findJournalByCommandIds } from './store/engine-journal-store.ts';
import { getOrder, getOrderByClientId, listTrades, type PerpOrderRecord } from './store/perp-history-store.ts';
import type { PerpVenue } from './perp-venue.ts';
import { averagePrice, fillBody, openOrderBody, orderBody, positionBody, priceOf, sizeOf, takerFill, triggerFields, usd, type OrderBody, type PositionBody } from './perp-views.ts';
import { venueNow } from '../lib/venue-clock.ts';

export type BuildOrderInput = OrderInput;

/**
 * `turn`: awaited once the order is checked and its nonce claimed, before it is handed to the engine:
 * the stream's order lane checks a connection's orders together and hands them over in the order
 * sent (src/streams/stream-endpoint.ts). `onSubmitted`: called once the command is handed to the
 * engine (which applies commands in the order it receives them), before its durable answer: the
 * connection's next order takes its turn then. Not called when refused before.
 */
export interface SubmitHooks {
  turn?: Promise<void>;
  onSubmitted?: () => void;
}

/** What the submitting route asks of the order beyond being valid. */
export type SubmitMode = 'order' | 'fill' | 'close';

export interface OrderService {
  build(caller: AuthKey, input: BuildOrderInput): { typedData: ReturnType<typeof orderType.build> | ReturnType<typeof triggerOrderType.build>; orderHash: string };
  submit(caller: AuthKey, body: { message: unknown; signature: unknown }, mode?: SubmitMode, hooks?: SubmitHooks): Promise<SubmittedOrder>;
  /**
   * 1 to MAX_BATCH_ORDERS signed orders applied back to back by the engine and journalled in one
   * commit; each answered on its own, in input order ({code: 0, order} or {code, msg}).
   */
  submitBatch(caller: AuthKey, body: { orders: Array<{ message: unknown; signature: unknown }> }, hooks?: SubmitHooks): Promise<BatchOrdersResult>;
  /** The EIP-712 amendment of an open order for the wallet to sign. */
  buildAmend(caller: AuthKey, input: AmendInput): { typedData: ReturnType<typeof amendOrderType.build>; amendHash: string };
  /** Applies a signed amendment: the order as it stands after it, under the same orderId. */
  amend(caller: AuthKey, body: { message: unknown; signature: unknown }, hooks?: SubmitHooks): Promise<SubmittedOrder>;
  /** One of the caller's orders in any state, by engine id or by clientOrderId. */
  getOrder(caller: AuthKey, orderId: string): Promise<Order>;
  getOrderByClientId(caller: AuthKey, clientOrderId: string): Promise<Order>;
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
  /**
   * An order authorised by the API key alone (no order signature: Monday-shaped `order/market`,
   * `order/limit`, monday-order-service.ts), accepted only while the account's One-Click Trade
   * session is `delegate` (the venue's own, one-click-service.ts) and active. The order then takes
   * the signed orders' path from the command on: the same checks of the instrument's steps, the
   * engine's risk checks and price band, the same answer; it expires with the session. With an
   * Idempotency-Key a retry is answered as the first request.
   */
  placeDelegated(caller: AuthKey, input: DelegatedOrderInput, delegate: string, idempotencyKey?: string): Promise<SubmittedOrder>;
}

/** An order without a signature, as placeDelegated takes it. */
export interface DelegatedOrderInput {
  symbol: string;
  side: 'BUY' | 'SELL';
  type: 'MARKET' | 'LIMIT';
  size: string;
  /** LIMIT: the limit price; MARKET: the worst price ('' for none). */
  price: string;
  timeInForce: 'GTC' | 'IOC' | 'POST_ONLY';
  /** Made the account's leverage on the symbol first, when it differs. */
  leverage?: number;
}

const isOpenStatus = (status: string): boolean => (OPEN_ORDER_STATUSES as readonly string[]).includes(status);

/** An order id as the API shows it (a decimal string); anything else names no order. */
function parseOrderId(raw: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw new NotFoundError('order');
  return Number(raw);
}

export function createOrderService(opts: {
  db: Db;
  /** Where the projection's history is (its own SQLite file, storage-wiring.ts openHistoryDatabase); default `db`. */
  history?: Db;
  venue: PerpVenue;
  domain: TypedDataDomain;
  now?: () => number;
}): OrderService {
  const { db, venue, domain } = opts;
  const historyDb = opts.history ?? db;
  const now = opts.now ?? venueNow;

  const { submit, place, once } = readYourWrites(db, venue);
  // Used nonces are written in group commits (one transaction for the orders of a turn), and rows
  // a day past their order's expiry are pruned, as the single claims did.
  // With the engine in this process, the journal's ledger (perp-venue.ts `nonces`): one durable
  // commit a turn instead of two.
  const nonces = venue.nonces ?? createOrderNonceClaimer(db, { retentionMs: NONCE_RETENTION_MS, now });

  /**
   * A nonce for a built order or amendment: 63 bits, fresh per build, far below uint64's range.
   * Random, but drawn from the seed in a seeded sandbox (docs/sandbox.md "Determinism"): from the
   * account, the engine's sequence and how many were drawn at it, so the same run from the same
   * state draws the same ones, and a draw after an order was placed never repeats one before it.
   */
  const drawn = new Map<string, { seq: number; n: number }>();
  const freshNonce = (account: string): bigint => {
    const seed = venueSeed();
    if (seed === undefined) return BigInt(`0x${randomBytes(8).toString('hex')}`) >> 1n;
    const seq = venue.engine().lastSeq;
    const last = drawn.get(account);
    const n = last !== undefined && last.seq === seq ? last.n + 1 : 0;
    drawn.set(account, { seq, n });
    return seededUint64(seed, 'perp-order-nonce', account, seq, n) >> 1n;
  };

  const spec = (symbol: string): InstrumentSpec => {
    const s = venue.engine().instrument(symbol);
    if (s === undefined) throw new NotFoundError('symbol', { reason: notListed(String(symbol)) });
    return s;
  };

  /** The engine command of an order message, every field checked against its instrument. */
  const commandOf = (m: OrderCommandFields, prefix: string) => placeCommandOf(spec(m.symbol), m, prefix);

  /** The order's current state: resting in the engine, else its history row. */
  const currentOrder = async (s: InstrumentSpec, orderId: number): Promise<OrderBody | undefined> => {
    const history = await getOrder(historyDb, orderId);
    const live = venue.engine().getOrder(orderId);
    if (live) return openOrderBody(s, live, history);
    return history ? orderBody(s, history) : undefined;
  };

  const answer = async (s: InstrumentSpec, r: PlaceOrderAccepted & { resubmitted?: true; journalSeq?: number | null }, cmd: Omit<PlaceOrderCommand, 'id' | 'ts' | 'account'>): Promise<SubmittedOrder> => {
    const o = r.order;
    if (r.duplicate || r.resubmitted === true) {
      // An order placed before: as it stands now, with its fills so far (the history may lag the
      // engine by a batch, so an order done a moment ago can miss there: it is then answered as the
      // engine answered it). A placement's answer does not wait for a replica (`place`): this one
      // reads it, so it does.
      await venue.caughtUp?.(r.journalSeq ?? null);
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
      ...triggerFields(s, {
        triggerPriceTicks: cmd.triggerPriceTicks ?? null,
        triggerBy: cmd.triggerPriceTicks !== undefined ? (cmd.triggerBy ?? 'MARK') : null,
        closePosition: cmd.closePosition === true,
        triggeredAt: null,
      }),
      createdAt: ts,
      updatedAt: ts,
      fills: r.fills.map((e) => takerFill(s, e)),
      duplicate: r.duplicate || r.resubmitted === true,
    };
  };

  async function listOrderFills(orderId: number) {
    const order = await getOrder(historyDb, orderId);
    if (!order) return [];
    return (await listTrades(historyDb, { account: order.account, orderId, offset: 0, limit: 1_000 })).rows.reverse();
  }

  interface PreparedOrder {
    spec: InstrumentSpec;
    cmd: Omit<PlaceOrderCommand, 'id' | 'ts' | 'account'>;
    command: PlaceOrderCommand;
    /** The nonce claim the engine makes before applying the order (the gateway's `claimsNonces`). */
    claim?: NonceClaimInput;
  }

  /**
   * A signed order checked and ready for the engine: the message parsed as its type (an Order, or a
   * TriggerOrder when it carries `triggerPrice`), its fields against the instrument, the signature
   * (the key's wallet or its session signer), the expiry, and its nonce claimed once per account.
   */
  async function prepareOrder(caller: AuthKey, body: { message: unknown; signature: unknown }, mode: SubmitMode, at = ''): Promise<PreparedOrder> {
    const account = walletOf(caller);
    const raw = body?.message;
    const trigger = raw !== null && typeof raw === 'object' && Object.hasOwn(raw, 'triggerPrice');
    const kind = trigger ? triggerOrderType : orderType;
    const m = parseIn(at, () => kind.parseMessage(raw)) as unknown as OrderMessage;
    if (m.account.toLowerCase() !== account) throw new ValidationError(`${at}message.account`, 'must be the wallet of the API key');
    const { spec: s, cmd } = parseIn(at, () => commandOf(m, 'message.'));
    if (mode !== 'order' && trigger) throw new ValidationError(`${at}message.orderType`, 'must be LIMIT or MARKET here');
    if (mode === 'fill' && (cmd.timeInForce !== 'IOC' && cmd.timeInForce !== 'FOK')) throw new ValidationError('message.timeInForce', 'must be IOC or FOK for a fill');
    if (mode === 'fill' && cmd.priceTicks === undefined) throw new ValidationError('message.price', 'a fill needs a worst price');
    if (mode === 'close') {
      if (!m.reduceOnly) throw new ValidationError('message.reduceOnly', 'must be true to close a position');
      const held = venue.engine().getAccount(account)?.positions.find((p) => p.symbol === s.symbol)?.sizeLots ?? 0;
      if (held === 0) throw new RejectedError('POSITION_NOT_OPEN', `no open ${s.symbol} position to close`);
    }
    // Hashed once: the digest is both what the signature covers and the order's id.
    const orderHash = kind.hash(domain, m as unknown as Record<string, unknown>);
    const signer = await parseIn(at, () => kind.recoverSigner(domain, m as unknown as Record<string, unknown>, body.signature, orderHash));
    if (signer.toLowerCase() !== account) await assertSessionSigner(db, { account, signer, orderExpiry: m.expiry, now: now() });
    const t = now();
    if (m.expiry < BigInt(t)) throw new RejectedError('ORDER_EXPIRED', 'the signed order has expired; build and sign a new one');
    if (m.expiry > BigInt(t + MAX_ORDER_TTL_MS)) throw new ValidationError(`${at}message.expiry`, 'must be at most 30 days ahead');
    const rec: NonceClaimInput = { account, nonce: m.nonce.toString(), orderHash, expiry: Number(m.expiry), usedAt: t };
    const command: PlaceOrderCommand = { ...cmd, id: `ord:${orderHash}`, ts: t, account, expiresAtMs: Number(m.expiry) };
    // An engine apart that claims nonces (protocol 2) gets the claim with the order: this process
    // then writes nothing per order (issue 40, item 5). The journal's ledger of an engine in this
    // process is cheaper still and comes first.
    if (venue.nonces === undefined && venue.gateway.claimsNonces?.() === true) return { spec: s, cmd, command, claim: rec };
    const claim = await nonces.claim(rec);
    if (claim === 'used') throw new RejectedError('NONCE_USED', NONCE_USED_MESSAGE);
    return { spec: s, cmd, command };
  }

  /** Runs `f`, naming the batch position in a validation error's field (`orders[3].message.size`). */
  function parseIn<T>(at: string, f: () => T): T {
    if (at === '') return f();
    try {
      const v = f();
      if (v instanceof Promise) return v.catch((err: unknown) => { throw prefixed(at, err); }) as T;
      return v;
    } catch (err) {
      throw prefixed(at, err);
    }
  }

  function prefixed(at: string, err: unknown): unknown {
    const field = (err as { field?: unknown } | null)?.field;
    if (err instanceof ValidationError && typeof field === 'string') return new ValidationError(`${at}${field}`, err.message.replace(/^[^:]*: /, ''));
    return err;
  }

  /** One order's refusal in a batch: the code and words this order alone would have been answered. */
  function batchRefusal(err: unknown): BatchOrderResult {
    const e = isAppError(err) ? err : new AppError('INTERNAL', 'internal error', { cause: err });
    const body = perpEnvelope.renderError(e, '').body as { code: number; msg: string };
    return { code: body.code, msg: body.msg };
  }

  /** The engine command of an amendment, its fields checked against the order's instrument. */
  function amendCommandOf(account: string, m: Pick<AmendMessage, 'orderId' | 'price' | 'size'>, prefix: string) {
    const orderId = Number(m.orderId);
    if (!Number.isSafeInteger(orderId) || orderId <= 0) throw new NotFoundError('order');
    const live = venue.engine().getOrder(orderId);
    if (!live || live.account !== account) throw new NotFoundError('order');
    return amendCommandFor(spec(live.symbol), orderId, m, prefix);
  }

  /** An open order of the account by clientOrderId before the history has it (placed a moment ago). */
  function openByClientId(account: string, clientOrderId: string): OrderView | undefined {
    return venue.engine().openOrders(account).find((o) => o.clientOrderId === clientOrderId);
  }

  return {
    placeDelegated,
    build(caller, input) {
      const account = walletOf(caller);
      const t = now();
      const expiry = input.expiry ?? t + DEFAULT_ORDER_TTL_MS;
      const late = orderExpiryIssue(expiry, t);
      if (late) throw new ValidationError(late.field, late.reason);
      // The input's own fields first: a LIMIT order given a triggerPrice is refused, not signed without it.
      const issue = orderBasicIssue(input);
      if (issue) throw new ValidationError(issue.field, issue.reason);
      const trigger = isTriggerType(input.type);
      const base = {
        account: account as Address,
        symbol: input.symbol,
        side: input.side,
        orderType: input.type,
        size: input.size ?? '',
        price: input.price ?? '',
        timeInForce: input.timeInForce ?? defaultTimeInForce(input.type),
        reduceOnly: input.reduceOnly ?? false,
        clientOrderId: input.clientOrderId ?? '',
      };
      const tail = {
        nonce: freshNonce(account),
        expiry: BigInt(expiry),
      };
      const message = trigger
        ? { ...base, triggerPrice: input.triggerPrice ?? '', triggerBy: input.triggerBy ?? 'MARK', closePosition: input.closePosition ?? false, ...tail }
        : { ...base, ...tail };
      commandOf(message, '');
      const kind = trigger ? triggerOrderType : orderType;
      return { typedData: kind.build(domain, message), orderHash: kind.hash(domain, message) };
    },

    async submit(caller, body, mode = 'order', hooks) {
      const prepared = await prepareOrder(caller, body, mode);
      if (hooks?.turn) await hooks.turn;
      const pending = place(prepared.command, prepared.claim);
      hooks?.onSubmitted?.();
      const r = (await pending) as CommandResult & { resubmitted?: true; journalSeq: number | null };
      if (!r.ok) throw engineError(r, undefined, prepared.spec);
      return answer(prepared.spec, r as PlaceOrderAccepted & { resubmitted?: true; journalSeq: number | null }, prepared.cmd);
    },

    async submitBatch(caller, body, hooks) {
      const list = body.orders;
      if (!Array.isArray(list) || list.length === 0 || list.length > MAX_BATCH_ORDERS) throw new ValidationError('orders', `must hold 1 to ${MAX_BATCH_ORDERS} signed orders`);
      // Each order is checked on its own (signature, nonce, steps); the ones that pass go to the
      // engine together, in input order, and are journalled in one commit.
      const prepared = await Promise.allSettled(list.map((o, i) => prepareOrder(caller, o, 'order', `orders[${i}].`)));
      const ready = prepared.flatMap((p) => (p.status === 'fulfilled' ? [p.value] : []));
      const commands = ready.map((p) => p.command);
      if (hooks?.turn) await hooks.turn;
      let results: Array<CommandResult & { resubmitted?: true; journalSeq: number | null }>;
      if (commands.length === 0) results = [];
      else if (venue.gateway.submitMany) {
        const pending = venue.gateway.submitMany(commands, ready.map((p) => p.claim));
        hooks?.onSubmitted?.();
        results = await pending;
        const last = results.reduce<number | null>((m, r) => (r.journalSeq !== null && (m === null || r.journalSeq > m) ? r.journalSeq : m), null);
        // As `place` does for one order: a replica's venue notes the row, another waits for it.
        if (venue.acknowledged) venue.acknowledged(last);
        else await venue.caughtUp?.(last);
      } else {
        // A broker gateway: sent in order, one after the other (docs/perp-api.md "Batch orders").
        results = [];
        for (const p of ready) results.push(await place(p.command, p.claim));
      }
      let next = 0;
      const out: BatchOrderResult[] = [];
      for (const p of prepared) {
        if (p.status === 'rejected') {
          out.push(batchRefusal(p.reason));
          continue;
        }
        const r = results[next++];
        try {
          if (!r.ok) throw engineError(r, undefined, p.value.spec);
          out.push({ code: 0, order: await answer(p.value.spec, r as PlaceOrderAccepted & { resubmitted?: true; journalSeq: number | null }, p.value.cmd) });
        } catch (err) {
          out.push(batchRefusal(err));
        }
      }
      return { results: out };
    },

    buildAmend(caller, input) {
      const account = walletOf(caller);
      const t = now();
      const expiry = input.expiry ?? t + DEFAULT_ORDER_TTL_MS;
      const late = orderExpiryIssue(expiry, t);
      if (late) throw new ValidationError(late.field, late.reason);
      const message = {
        account: account as Address,
        orderId: BigInt(parseOrderId(input.orderId)),
        price: input.price ?? '',
        size: input.size ?? '',
        nonce: freshNonce(account),
        expiry: BigInt(expiry),
      };
      amendCommandOf(account, message, '');
      return { typedData: amendOrderType.build(domain, message), amendHash: amendOrderType.hash(domain, message) };
    },

    async amend(caller, body, hooks) {
      const account = walletOf(caller);
      const m = amendOrderType.parseMessage(body.message) as unknown as AmendMessage;
      if (m.account.toLowerCase() !== account) throw new ValidationError('message.account', 'must be the wallet of the API key');
      const { spec: s, cmd } = amendCommandOf(account, m, 'message.');
      const amendHash = amendOrderType.hash(domain, m as unknown as Record<string, unknown>);
      const signer = await amendOrderType.recoverSigner(domain, m as unknown as Record<string, unknown>, body.signature, amendHash);
      if (signer.toLowerCase() !== account) await assertSessionSigner(db, { account, signer, orderExpiry: m.expiry, now: now() });
      const t = now();
      if (m.expiry < BigInt(t)) throw new RejectedError('ORDER_EXPIRED', 'the signed amendment has expired; build and sign a new one');
      if (m.expiry > BigInt(t + MAX_ORDER_TTL_MS)) throw new ValidationError('message.expiry', 'must be at most 30 days ahead');
      // Amendments share the account's order nonces: a signed amendment is applied once.
      const claim = await nonces.claim({ account, nonce: m.nonce.toString(), orderHash: amendHash, expiry: Number(m.expiry), usedAt: t });
      if (claim === 'used') throw new RejectedError('NONCE_USED', NONCE_USED_MESSAGE);
      // The order was read before the turn (its owner and instrument, which never change); whether
      // it is still open when the amendment applies is the engine's check.
      if (hooks?.turn) await hooks.turn;
      const pending = submit({ ...cmd, id: `amd:${amendHash}`, ts: t, account, expiresAtMs: Number(m.expiry) });
      hooks?.onSubmitted?.();
      const r = (await pending) as CommandResult & { resubmitted?: true };
      if (!r.ok) throw engineError(r, undefined, s);
      const a = r as AmendAccepted & { resubmitted?: true };
      const current = await currentOrder(s, a.order.orderId);
      const fills = (await listOrderFills(a.order.orderId)).filter((f) => (a.fills.length === 0 ? false : f.ts >= t)).map((f) => fillBody(s, f));
      // The history projects the amendment a moment after the engine applied it: the answer is the
      // order as amended, so its updatedAt is the amendment's time at the latest (not the placement's).
      if (current) return { ...current, updatedAt: Math.max(Number(current.updatedAt), t), fills: a.fills.length > 0 ? a.fills.map((e) => takerFill(s, e)) : fills, duplicate: r.resubmitted === true };
      throw new StorageUnavailableError({ data: unknownOutcomeData(false) });
    },

    async getOrder(caller, rawId) {
      const account = walletOf(caller);
      const orderId = parseOrderId(rawId);
      const live = venue.engine().getOrder(orderId);
      let history = await getOrder(historyDb, orderId);
      if (live && live.account === account) return openOrderBody(spec(live.symbol), live, history);
      // Done in the engine but not yet (or not finally) in the history: the projector is a moment
      // behind. An order just answered FILLED is read as FILLED, not as missing or still NEW.
      if (!live && orderId <= venue.engine().lastOrderId && (history === undefined || isOpenStatus(history.status))) history = await settledHistory(orderId, history);
      if (history && history.account === account) return orderBody(spec(history.symbol), history);
      throw new NotFoundError('order');
    },

    async getOrderByClientId(caller, clientOrderId) {
      const account = walletOf(caller);
      let history = await getOrderByClientId(historyDb, account, clientOrderId);
      const id = history?.orderId ?? venue.engine().orderIdOfClient(account, clientOrderId);
      const live = id === undefined ? undefined : venue.engine().getOrder(id);
      if (live && live.account === account) return openOrderBody(spec(live.symbol), live, history);
      if (!live && id !== undefined && (history === undefined || isOpenStatus(history.status))) history = await settledHistory(id, history);
      if (history && history.account === account) return orderBody(spec(history.symbol), history);
      throw new NotFoundError('order');
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
        const history = await getOrder(historyDb, orderId);
        if (history && history.account !== account) throw new NotFoundError('order');
        if (history && !(OPEN_ORDER_STATUSES as readonly string[]).includes(history.status)) throw new RejectedError('ORDER_NOT_OPEN', `order ${orderId} is ${history.status}`);
      });
      if (!r.ok) throw engineError(r);
      // The cancel's own time, the same on a retry (the journalled one).
      const canceled = { status: 'CANCELED' as const, reason: 'USER_CANCEL', remainingSize: '0', updatedAt: appliedAt };
      if (live) {
        let history;
        try {
          history = await getOrder(historyDb, orderId);
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
  /**
   * The history row of an order the engine no longer holds open, once the projector has written its
   * end (at most about 2 s: then whatever the history holds, which a client may read again).
   */
  async function settledHistory(orderId: number, seen: PerpOrderRecord | undefined): Promise<PerpOrderRecord | undefined> {
    let last = seen;
    for (let waited = 0; waited < 2_000; waited += 25) {
      await new Promise((r) => setTimeout(r, 25));
      last = await getOrder(historyDb, orderId);
      if (last && !isOpenStatus(last.status)) return last;
    }
    return last;
  }

  async function projectedOrder(orderId: number) {
    for (let waited = 0; ; waited += 50) {
      // This retry changed nothing (the first request did): a failed read is a plain 50002.
      const o = await getOrder(historyDb, orderId).catch((err: unknown) => {
        throw new StorageUnavailableError({ cause: err });
      });
      // The row as the cancel left it: one the projector has not brought past the cancel yet (an
      // amendment before it, say) would answer an older size.
      if (o && !(OPEN_ORDER_STATUSES as readonly string[]).includes(o.status)) return o;
      if (waited >= 2_000) throw new AppError('STORAGE_UNAVAILABLE', 'perp history: the cancelled order is not readable yet, try again', { retryable: true });
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async function placeDelegated(caller: AuthKey, input: DelegatedOrderInput, delegate: string, idempotencyKey?: string): Promise<SubmittedOrder> {
    const account = walletOf(caller);
    const t = now();
    const session = await getSession(db, account);
    if (!session || session.sessionAddress !== delegate.toLowerCase()) {
      throw new RejectedError(
        'ONE_CLICK_NOT_ENABLED',
        'an order without a wallet signature needs One-Click Trade enabled for the venue\'s delegate: POST one-click/prepare {"delegate":"venue","expiresAt":<ms>}, sign, POST one-click/enable',
      );
    }
    if (!sessionActive(session, t)) {
      throw new RejectedError('ONE_CLICK_NOT_ENABLED', "One-Click Trade for the venue's delegate has expired or was disabled: enable it again to place orders without a wallet signature");
    }
    const { spec: s, cmd } = commandOf(
      { symbol: input.symbol, side: input.side, orderType: input.type, size: input.size, price: input.price, timeInForce: input.timeInForce, reduceOnly: false, clientOrderId: '' },
      '',
    );
    const id = commandIdFor('delegated', account, idempotencyKey);
    // A retry with the same key: the fields the first request derived from the state of its time
    // (a market order's worst price from the mark, the expiry from the session) are the first
    // request's, so the retry is the same request and is answered from the journal (a different
    // body under the key is still a 10002 conflict). The leverage step was taken then.
    const prior = idempotencyKey === undefined ? undefined : (await findJournalByCommandIds(db, [id]))[0];
    const before = prior === undefined ? undefined : (JSON.parse(prior.command) as Partial<PlaceOrderCommand>);
    if (before?.kind === 'placeOrder' && cmd.type === 'MARKET' && typeof before.priceTicks === 'number') cmd.priceTicks = before.priceTicks;
    const expiresAtMs = before?.kind === 'placeOrder' && typeof before.expiresAtMs === 'number' ? before.expiresAtMs : session.expiresAt;
    if (input.leverage !== undefined && prior === undefined) {
      const current = venue.engine().getAccount(account)?.positions.find((p) => p.symbol === s.symbol)?.leverage;
      if (current !== input.leverage) {
        if (!Number.isSafeInteger(input.leverage) || input.leverage < 1) throw new ValidationError('leverage', 'must be a whole number from 1');
        if (input.leverage > s.maxLeverage) throw new RejectedError('LEVERAGE_EXCEEDED', `leverage: at most ${s.maxLeverage} on ${s.symbol}`);
        const lev: SetLeverageCommand = { kind: 'setLeverage', id: commandIdFor('leverage', account, undefined), ts: t, account, symbol: s.symbol, leverage: input.leverage };
        const { result: lr } = await submitOnce(once, lev, undefined);
        if (!lr.ok) throw engineError(lr, 'INSUFFICIENT_BALANCE');
      }
    }
    // The session's expiry is the order's: it was signed by the wallet, and nothing the delegate
    // authorised outlives it.
    const command: PlaceOrderCommand = { ...cmd, id, ts: now(), account, expiresAtMs };
    // With a key, an id journalled before is answered from the journal (compared first).
    const { result: r } = await submitOnce(once, command, idempotencyKey, () => undefined);
    if (!r.ok) throw engineError(r, undefined, s);
    return answer(s, r as PlaceOrderAccepted & { resubmitted?: true }, cmd);
  }

  function position(s: InstrumentSpec, account: string): PositionBody {
    const engine = venue.engine();
    const a = engine.getAccount(account)!;
    const p = a.positions.find((x) => x.symbol === s.symbol);
    if (!p) throw new NotFoundError('position');
    return positionBody(s, p, a, engine.prices(s.symbol)!.markPriceTicks || engine.prices(s.symbol)!.lastTradePriceTicks);
  }
}
