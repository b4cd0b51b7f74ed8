/**
 * Input checks every command shares. Bad input never throws: it answers a Rejected that the handler
 * returns before changing anything.
 */
import type { Rejected } from '../engine-types.ts';
import type { Account, Instrument } from './entities.ts';
import { reject, type EngineState } from './engine-state.ts';

/** Largest deposit, withdrawal or margin move in one command (micro-USD). */
export const MAX_AMOUNT = 10n ** 30n;
/** The longest command id (the sequencer refuses longer ones before they reach the journal). */
export const MAX_COMMAND_ID = 128;
const ADDRESS_RE = /^0x[0-9a-f]{40}$/;

export function isSafeNonNegInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

export function isSafePosInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
}

export function checkBase(cmd: { id: unknown; ts: unknown }): Rejected | null {
  if (typeof cmd.id !== 'string' || cmd.id.length === 0 || cmd.id.length > MAX_COMMAND_ID) return reject('INVALID', `id: a string of 1..${MAX_COMMAND_ID} characters`);
  if (!isSafeNonNegInt(cmd.ts)) return reject('INVALID', 'ts: milliseconds since the epoch');
  return null;
}

export function checkAmount(amount: unknown, field: string): Rejected | null {
  if (typeof amount !== 'bigint' || amount <= 0n || amount > MAX_AMOUNT) return reject('INVALID', `${field}: a positive bigint of micro-USD`);
  return null;
}

export function normaliseAccount(account: unknown): string | null {
  if (typeof account !== 'string') return null;
  const a = account.toLowerCase();
  return ADDRESS_RE.test(a) ? a : null;
}

export function accountOf(s: EngineState, account: unknown): Account | Rejected {
  // Known addresses arrive already normalised: one map lookup, no regex.
  if (typeof account === 'string') {
    const known = s.accounts.get(account);
    if (known !== undefined) return known;
  }
  const address = normaliseAccount(account);
  if (address === null) return reject('INVALID', 'account: must be a 0x address');
  return s.accounts.get(address) ?? reject('UNKNOWN_ACCOUNT', 'account: no deposit yet');
}

export function instrumentOf(s: EngineState, symbol: unknown): Instrument | Rejected {
  const inst = typeof symbol === 'string' ? s.instruments.get(symbol) : undefined;
  return inst ?? reject('UNKNOWN_SYMBOL', `symbol: unknown ${JSON.stringify(symbol)}`);
}

export function isRejected(v: unknown): v is Rejected {
  return typeof v === 'object' && v !== null && (v as { ok?: unknown }).ok === false;
}
