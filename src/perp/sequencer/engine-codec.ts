/**
 * JSON forms of the engine's commands, results and events, for the journal and for a broker. The
 * engine's money fields are bigints; here they are decimal strings, and decoding turns exactly the
 * known bigint fields (by command kind and event type) back into bigints. Anything else passes
 * through untouched, so a malformed command still reaches the engine and gets its INVALID answer.
 */
import type { CommandResult, EngineCommand, EngineEvent } from '../engine/engine-types.ts';
import { toJsonSafe } from '../engine/engine-types.ts';

/** A JSON value (what a broker message can carry). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The keys of T whose values are bigints (optional ones included). */
type BigintKeys<T> = { [K in keyof T]-?: NonNullable<T[K]> extends bigint ? K : never }[keyof T];
/** Exactly the bigint fields of T, each `true`: leaving one out, or naming another, does not compile. */
type BigintFieldSet<T> = { readonly [K in BigintKeys<T>]: true };

type CommandOf<K extends EngineCommand['kind']> = Extract<EngineCommand, { kind: K }>;
type EventOf<T extends EngineEvent['type']> = Extract<EngineEvent, { type: T }>;

/**
 * The bigint fields of every command kind and event type. The types make a forgotten field (or a new
 * command or event without an entry) a compile-time error instead of a string that `+=` would concatenate.
 */
const COMMAND_BIGINTS: { readonly [K in EngineCommand['kind']]: BigintFieldSet<CommandOf<K>> } = {
  deposit: { amount: true },
  withdraw: { amount: true },
  placeOrder: {},
  amendOrder: {},
  cancelOrder: {},
  cancelOrders: {},
  cancelAll: {},
  setLeverage: {},
  adjustMargin: { amount: true },
  setMarkPrice: {},
  applyFunding: { rateE9: true },
  addInstrument: {},
  updateInstrument: {},
  requestWithdrawal: { amount: true },
  settleWithdrawal: {},
  addLiquidity: { amount: true },
  removeLiquidity: { shares: true },
  cancelAllAfter: {},
  applySplit: {},
  setRules: {},
};

const EVENT_BIGINTS: { readonly [T in EngineEvent['type']]: BigintFieldSet<EventOf<T>> } = {
  orderAccepted: {},
  orderTriggered: {},
  orderAmended: {},
  orderResting: { reserved: true },
  trade: { notional: true, makerFee: true, takerFee: true, makerRealisedPnl: true, takerRealisedPnl: true },
  orderDone: {},
  positionChanged: { entryNotional: true, isolatedMargin: true, realisedPnl: true },
  balanceChanged: { collateral: true, delta: true },
  fundingPayment: { rateE9: true, amount: true },
  fundingApplied: { rateE9: true, paid: true, received: true, remainder: true },
  markPrice: {},
  split: {},
  leverageChanged: {},
  instrumentConfigured: {},
  withdrawal: { amount: true },
  liquidity: { amount: true, shares: true, holderShares: true, totalShares: true, poolEquity: true },
  liquidation: { fee: true, equity: true, maintenanceMargin: true },
  adl: { realisedPnl: true },
  insurance: { delta: true, balance: true },
  badDebt: { amount: true },
  cancelAllAfter: {},
};

const INTEGER = /^-?(0|[1-9][0-9]*)$/;

function reviveBigints(obj: Record<string, unknown>, fields: object | undefined): void {
  if (fields === undefined) return;
  for (const f of Object.keys(fields)) {
    const v = obj[f];
    if (typeof v === 'string' && INTEGER.test(v)) obj[f] = BigInt(v);
  }
}

/**
 * A copy of a JSON command or event with the bigint fields its kind (the value of `tag`) has in
 * `table` read back as bigints; a kind the table does not know is copied as it is.
 */
function revived<T>(json: unknown, tag: 'kind' | 'type', table: Record<string, object>): T {
  const obj = { ...(json as Record<string, unknown>) };
  reviveBigints(obj, Object.hasOwn(table, String(obj[tag])) ? table[String(obj[tag])] : undefined);
  return obj as unknown as T;
}

/** JSON-safe copy of a command (bigints as decimal strings). */
export function commandToJson(cmd: EngineCommand): Json {
  return toJsonSafe(cmd) as Json;
}

/** The inverse of commandToJson. */
export function commandFromJson(json: unknown): EngineCommand {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return json as EngineCommand;
  return revived<EngineCommand>(json, 'kind', COMMAND_BIGINTS);
}

export function eventToJson(event: EngineEvent): Json {
  return toJsonSafe(event) as Json;
}

export function eventFromJson(json: unknown): EngineEvent {
  return revived<EngineEvent>(json, 'type', EVENT_BIGINTS);
}

/** JSON-safe copy of a result, events and fills included. */
export function resultToJson(result: CommandResult): Json {
  return toJsonSafe(result) as Json;
}

export function resultFromJson(json: unknown): CommandResult {
  const r = { ...(json as Record<string, unknown>) };
  if (Array.isArray(r.events)) r.events = r.events.map(eventFromJson);
  if (Array.isArray(r.fills)) r.fills = r.fills.map(eventFromJson);
  return r as unknown as CommandResult;
}

const bigintAsString = (_key: string, v: unknown): unknown => (typeof v === 'bigint' ? v.toString() : v);

/** JSON text of a command, bigints as decimal strings (= JSON.stringify(commandToJson(cmd)), faster). */
export function commandToText(cmd: EngineCommand): string {
  return JSON.stringify(cmd, bigintAsString);
}

// Results carry `events` and `fills` at the top level only.
const summaryReplacer = function (this: unknown, key: string, v: unknown): unknown {
  if ((key === 'events' || key === 'fills') && this !== null && typeof this === 'object' && 'code' in this) return undefined;
  return typeof v === 'bigint' ? v.toString() : v;
};

/**
 * The answer as the journal keeps it: everything but the events (and fills, a subset of them),
 * which a replay regenerates. Journal rows stay small, and the events live in one place.
 */
export function resultSummaryToJson(result: CommandResult): string {
  return JSON.stringify(result, summaryReplacer);
}

/** A journalled answer, with empty `events` (and `fills` for an accepted placeOrder). */
export function resultFromSummary(text: string): CommandResult {
  const r = JSON.parse(text) as Record<string, unknown>;
  r.events = [];
  if (r.ok === true && r.order !== undefined) r.fills = [];
  return r as unknown as CommandResult;
}
