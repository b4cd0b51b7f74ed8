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

const COMMAND_BIGINTS: Record<string, readonly string[]> = {
  deposit: ['amount'],
  withdraw: ['amount'],
  adjustMargin: ['amount'],
  applyFunding: ['rateE9'],
};

const EVENT_BIGINTS: Record<string, readonly string[]> = {
  orderResting: ['reserved'],
  trade: ['notional', 'makerFee', 'takerFee', 'makerRealisedPnl', 'takerRealisedPnl'],
  positionChanged: ['entryNotional', 'isolatedMargin', 'realisedPnl'],
  balanceChanged: ['collateral', 'delta'],
  fundingPayment: ['rateE9', 'amount'],
  fundingApplied: ['rateE9', 'paid', 'received', 'remainder'],
};

const INTEGER = /^-?(0|[1-9][0-9]*)$/;

function reviveBigints(obj: Record<string, unknown>, fields: readonly string[] | undefined): void {
  if (fields === undefined) return;
  for (const f of fields) {
    const v = obj[f];
    if (typeof v === 'string' && INTEGER.test(v)) obj[f] = BigInt(v);
  }
}

/** JSON-safe copy of a command (bigints as decimal strings). */
export function commandToJson(cmd: EngineCommand): Json {
  return toJsonSafe(cmd) as Json;
}

/** The inverse of commandToJson. */
export function commandFromJson(json: unknown): EngineCommand {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return json as EngineCommand;
  const cmd = { ...(json as Record<string, unknown>) };
  reviveBigints(cmd, COMMAND_BIGINTS[String(cmd.kind)]);
  return cmd as unknown as EngineCommand;
}

export function eventToJson(event: EngineEvent): Json {
  return toJsonSafe(event) as Json;
}

export function eventFromJson(json: unknown): EngineEvent {
  const ev = { ...(json as Record<string, unknown>) };
  reviveBigints(ev, EVENT_BIGINTS[String(ev.type)]);
  return ev as unknown as EngineEvent;
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
