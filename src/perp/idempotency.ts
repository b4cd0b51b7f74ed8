/**
 * Idempotency of the perpetual API's state-changing requests (docs/perp-api.md "Idempotency").
 *
 * A client names a request with an `Idempotency-Key` header (1 to 64 visible ASCII characters). The
 * engine command of that request then gets a deterministic id, `<scope>:<account>:<key>`, instead
 * of a fresh one. The sequencer answers a command id once (docs/perp-sequencer.md "Idempotency"), so
 * a retry after an unknown outcome (a timeout, a 50002) is answered with the first request's result
 * and applies nothing again, on any API instance and after a restart: the journal keeps every id.
 *
 * The same key sent with another request is refused (10002 STATE_CONFLICT): the command journalled
 * under the id is compared with the new one, every field but the id and the time. What is compared is
 * therefore what the request asks the engine to do, which is what a double application would repeat:
 * an endpoint whose effect lies partly outside its engine command must derive that part from the
 * command or its id, never from a body field the command does not hold.
 *
 * Without a key every request gets a fresh id, as before: a retry is a new request.
 *
 * Use (a new endpoint):
 *
 *   const key = idempotencyKeyOf(req.headers);                        // route
 *   const cmd = { kind: 'withdraw', id: commandIdFor('withdraw', account, key), ts: now(), account, amount };
 *   const { result } = await submitOnce({ db, submit }, cmd, key);    // service
 *   if (!result.ok) throw engineError(result);
 */
import { randomUUID } from 'node:crypto';
import { AppError, ConflictError, StorageUnavailableError, ValidationError } from '../errors/app-error.ts';
import { canonicalJson, IDEMPOTENCY_HEADER, isIdempotencyKey, MAX_IDEMPOTENCY_KEY } from '../http/idempotency-key.ts';

// Parsed by the HTTP layer both APIs share; re-exported for the perp modules that name it here.
export { idempotencyKeyOf } from '../http/idempotency-key.ts';
import type { DbExecutor } from '../storage/database.ts';
import type { EngineCommand } from './engine/engine-types.ts';
import { commandToText, resultFromSummary } from './sequencer/engine-codec.ts';
import type { SequencedResult } from './sequencer/engine-sequencer.ts';
import { findJournalByCommandIds, type JournalRow } from './store/engine-journal-store.ts';

/** Lower-case, short: `<scope>:<0x…40 hex>:<64 chars>` stays within the sequencer's 128-character ids. */
const SCOPE = /^[a-z][a-z0-9-]{0,19}$/;
const ACCOUNT = /^0x[0-9a-f]{40}$/;
/** Prefixes of ids the engine's own workers use: a client key must never be able to name one. */
const RESERVED_SCOPES = new Set(['dep', 'rev', 'ord', 'mark', 'funding', 'taker', 'mm', 'pool', 'instrument', 'withdrawal', 'withdrawal-settle']);

/** `JSON` text of what a command asks, without its id and time, keys sorted: equal for the same request. */
function requestOf(command: unknown): string {
  const { id: _id, ts: _ts, ...rest } = command as Record<string, unknown>;
  return canonicalJson(rest);
}

function conflict(): AppError {
  return new ConflictError(`${IDEMPOTENCY_HEADER}: already used by another request of this account on this endpoint; use a new key for a new request`);
}

/**
 * The engine command id of a state-changing request. With a key: `<scope>:<account>:<key>`, the
 * same for every retry, so the sequencer answers the retry with the first result; the id is scoped
 * by the endpoint (`scope`) and the account, so two accounts, or two endpoints, never share one.
 * Without a key: `<scope>:<random UUID>`, a new request each time.
 *
 * `scope`: lower-case letters, digits and `-`, 1–20 characters, one per endpoint (`margin`,
 * `leverage`, `cancel`, `batch-cancel`, `withdraw`, …), not a prefix the engine's workers use.
 * `account`: the lower-case 0x address of the key's wallet. Both are the caller's (a programming
 * error throws a plain Error); `key` is the client's and was checked by idempotencyKeyOf.
 */
export function commandIdFor(scope: string, account: string, key: string | undefined): string {
  if (!SCOPE.test(scope) || RESERVED_SCOPES.has(scope)) throw new Error(`idempotency: unusable scope ${JSON.stringify(scope)}`);
  if (key === undefined) return `${scope}:${randomUUID()}`;
  if (!ACCOUNT.test(account)) throw new Error('idempotency: account must be a lower-case 0x address');
  if (!isIdempotencyKey(key)) throw new ValidationError('idempotency-key', `must be 1 to ${MAX_IDEMPOTENCY_KEY} visible ASCII characters, sent once`);
  return `${scope}:${account}:${key}`;
}

async function journalled(db: DbExecutor, id: string, outcome: 'not-sent' | 'sent'): Promise<JournalRow | undefined> {
  try {
    return (await findJournalByCommandIds(db, [id]))[0];
  } catch (err) {
    // Before the command was sent nothing happened; after it, the answer is lost: the client retries
    // with the same key and gets it.
    throw new StorageUnavailableError({ cause: err, ...(outcome === 'sent' ? { data: unknownOutcomeData(true) } : {}) });
  }
}

/**
 * The answer journalled under `cmd.id` before (the retry of a request already applied or refused),
 * `resubmitted: true`, with the journal row; undefined when the id is new. ConflictError (10002)
 * when the id was used by another request.
 */
export async function priorAnswer(db: DbExecutor, cmd: EngineCommand): Promise<{ result: SequencedResult; row: JournalRow } | undefined> {
  const row = await journalled(db, cmd.id, 'not-sent');
  if (row === undefined) return undefined;
  if (requestOf(JSON.parse(row.command)) !== requestOf(JSON.parse(commandToText(cmd)))) throw conflict();
  return { result: { ...resultFromSummary(row.result), journalSeq: row.seq, resubmitted: true }, row };
}

/** `data` of a 50002 whose outcome is unknown (the envelope answers it as is). */
export function unknownOutcomeData(withKey: boolean): { outcome: 'unknown'; retry: string } {
  return {
    outcome: 'unknown',
    retry: withKey
      ? `send the same request again with the same ${IDEMPOTENCY_HEADER}: it is applied at most once`
      : `read the state before sending it again, or send requests with an ${IDEMPOTENCY_HEADER} to retry them safely`,
  };
}

/**
 * A failure of the engine submit as the client must hear it: the engine may or may not have applied
 * the command (a journal write lost during COMMIT, no reply from the engine process in time, a
 * broker connection lost while sending; over a broker the API cannot tell which), so it is a 50002
 * saying `data.outcome: "unknown"`. The API's own errors other than 50002 (an engine fault, 50000)
 * pass unchanged.
 */
export function withUnknownOutcome(err: unknown, withKey: boolean): unknown {
  if (err instanceof AppError && err.code !== 'STORAGE_UNAVAILABLE') return err;
  const message = err instanceof AppError ? err.message : 'perp engine: no answer, the request may or may not have been applied';
  return new AppError('STORAGE_UNAVAILABLE', message, { retryable: true, cause: err, data: unknownOutcomeData(withKey) });
}

export interface SubmitOnceDeps {
  db: DbExecutor;
  /** The venue's submit (answers once the command is durable and readable). */
  submit: (cmd: EngineCommand) => Promise<SequencedResult>;
  /** The venue's wait for its engine reads to show a journal seq (a replica); absent when they always do. */
  caughtUp?: (journalSeq: number | null) => Promise<void>;
}

export interface SubmittedOnce {
  /** The engine's answer: this request's, or the journalled answer of the first request with its key. */
  result: SequencedResult;
  /** When the command was applied (its `ts`): the first request's time on a retry. */
  appliedAt: number;
  /** True when a request with this key was applied (or refused) before: nothing happened now. */
  replayed: boolean;
}

/**
 * Sends `cmd` (its id from commandIdFor with the same key) to the engine, once per key:
 *
 * - with a key and `checks` (state-dependent refusals such as "the order is no longer open", which a
 *   retry of a request that succeeded must not hit): an id journalled before is answered from the
 *   journal without running them;
 * - otherwise `checks` run, then the command is submitted; with a key, the journalled command is
 *   compared after the answer, so two different requests racing with one key cannot share an answer
 *   unnoticed (ConflictError, 10002);
 * - a storage or engine-transport failure is a 50002 with `data.outcome: "unknown"`.
 */
export async function submitOnce(deps: SubmitOnceDeps, cmd: EngineCommand, key: string | undefined, checks?: () => Promise<void> | void): Promise<SubmittedOnce> {
  const keyed = key !== undefined;
  if (keyed && checks !== undefined) {
    const prior = await priorAnswer(deps.db, cmd);
    if (prior !== undefined) {
      // The answer then reads the state the first request left: a replica must have applied it.
      await deps.caughtUp?.(prior.row.seq);
      return { result: prior.result, appliedAt: prior.row.ts, replayed: true };
    }
  }
  await checks?.();
  let result: SequencedResult;
  try {
    result = await deps.submit(cmd);
  } catch (err) {
    throw withUnknownOutcome(err, keyed);
  }
  let appliedAt = cmd.ts;
  if (keyed && result.journalSeq !== null) {
    // Also when the answer is not flagged resubmitted: a broker may hand the first answer to every
    // waiter of the id.
    const row = await journalled(deps.db, cmd.id, 'sent');
    if (row !== undefined) {
      if (requestOf(JSON.parse(row.command)) !== requestOf(JSON.parse(commandToText(cmd)))) throw conflict();
      appliedAt = row.ts;
    }
  }
  return { result, appliedAt, replayed: result.resubmitted === true };
}
