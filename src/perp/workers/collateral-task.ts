/**
 * Credits the MarginVault's deposits to the engine (docs/perp-api.md "Collateral"): the perp
 * indexer writes each `Deposited` log as a row of `perp_collateral_events` once it has
 * PERP_CONFIRMATIONS; this task submits a `deposit` command per row, in chain order, and marks the
 * row applied. A deposit's command id is `dep:<txHash>-<logIndex>`, so submitting it again (after a
 * crash between the command and the mark) is answered from the journal and credits nothing twice.
 *
 * A deposit the engine refuses is marked refused, never applied (which would show it CREDITED with
 * nothing credited, and reverse on a reorg a credit never made). The engine refuses a deposit only
 * for what it can never accept: an amount above its per-command MAX_AMOUNT (10^30 token units,
 * 10^24 USDC, which only a token minted without bounds could reach), or an account, id or time that
 * is malformed (the indexer writes none); and the journal answers that id with its refusal for ever.
 * So a refused row is not retried: it stays in the account's deposits with its reason (the journalled
 * answer), for the operator to settle. What can pass on a retry (the sequencer recovering, the
 * journal's database down, no reply from the engine process) is a thrown error: the row stays
 * pending, the round stops there (chain order) after marking what it did, and the next round tries
 * it again.
 *
 * A row a reorg removed between the credit and the mark is reversed at once (`withdraw` with id
 * `rev:<eventId>`); so is an applied row the indexer later marks orphaned. A reversal the engine
 * refuses (the account spent the credit) is tried again, no sooner than `reversalRetryMs`, under a
 * new id `rev:<eventId>:<n>`: the journal answers a refused id with its refusal for ever. Attempt n
 * is only made once attempt n − 1 was answered refused, so at most one attempt is ever taken; after
 * a restart the ids are walked from the first, each earlier one answered from the journal. Withdrawal rows
 * (`Withdrawn`, paid by the operator after the engine debited the account) only confirm what the
 * engine did: they are marked applied without a command.
 */
import { periodic } from '../../lib/async.ts';
import type { Logger } from '../../lib/logger.ts';
import type { DbExecutor } from '../../storage/database.ts';
import { DEPOSIT_COMMAND_PREFIX } from '../store/collateral-event-store.ts';
import type { EngineGateway } from '../sequencer/engine-gateway.ts';
import {
  acknowledgeOrphanedCollateralEvents,
  getCollateralEvent,
  listOrphanedCollateralEvents,
  listUnappliedCollateralEvents,
  markCollateralEventsApplied,
  markCollateralEventsRefused,
  type CollateralEventRecord,
} from '../store/collateral-event-store.ts';

export const REVERSAL_COMMAND_PREFIX = 'rev:';

export interface CollateralTaskOptions {
  db: DbExecutor;
  gateway: Pick<EngineGateway, 'submit'>;
  logger?: Pick<Logger, 'warn' | 'error' | 'info'>;
  /** Default 250 ms. */
  pollMs?: number;
  /** Rows per round. Default 500. */
  batch?: number;
  /** Wait before a refused reversal is tried again (each try is a journal row). Default 30 000 ms. */
  reversalRetryMs?: number;
  now?: () => number;
}

export interface CollateralTask {
  start(): void;
  stop(): Promise<void>;
  /** One round now: credits what is pending, reverses orphans. Answers the rows handled. */
  runOnce(): Promise<number>;
}

export function createCollateralTask(opts: CollateralTaskOptions): CollateralTask {
  const now = opts.now ?? Date.now;
  const pollMs = opts.pollMs ?? 250;
  const limit = opts.batch ?? 500;
  const retryMs = opts.reversalRetryMs ?? 30_000;
  const refused = new Set<string>();
  /** Per refused reversal: the next attempt number and the earliest time to make it. */
  const attempts = new Map<string, { n: number; at: number }>();

  const reverse = async (ev: CollateralEventRecord): Promise<boolean> => {
    let attempt = attempts.get(ev.eventId) ?? { n: 0, at: 0 };
    if (now() < attempt.at) return false;
    for (;;) {
      const id = attempt.n === 0 ? `${REVERSAL_COMMAND_PREFIX}${ev.eventId}` : `${REVERSAL_COMMAND_PREFIX}${ev.eventId}:${attempt.n}`;
      const r = await opts.gateway.submit({ kind: 'withdraw', id, ts: now(), account: ev.account, amount: BigInt(ev.amount) });
      if (r.ok) {
        // Taken now, or by an earlier attempt the journal answered (before a restart).
        attempts.delete(ev.eventId);
        refused.delete(ev.eventId);
        return true;
      }
      // A refused id stays refused: the next try needs the next id.
      attempt = { n: attempt.n + 1, at: now() + retryMs };
      attempts.set(ev.eventId, attempt);
      if (r.resubmitted) continue; // refused before a restart: walk on to the attempt not yet made
      // The account spent the credit already: the reversal waits until it can be taken (and is
      // logged once), the way an exchange carries a negative balance from a reorged deposit.
      if (!refused.has(ev.eventId)) opts.logger?.error({ eventId: ev.eventId, account: ev.account, code: r.code }, 'perp collateral: reorged deposit cannot be reversed yet');
      refused.add(ev.eventId);
      return false;
    }
  };

  const runOnce = async (): Promise<number> => {
    let handled = 0;
    const pending = await listUnappliedCollateralEvents(opts.db, limit);
    const credited: CollateralEventRecord[] = [];
    /** Rows settled this round (credited, or withdrawals confirmed), in chain order. */
    const done: string[] = [];
    const refusedNow = new Map<string, { ev: CollateralEventRecord; code: string }>();
    let failure: unknown;
    for (const ev of pending) {
      if (ev.kind !== 'deposit') {
        done.push(ev.eventId);
        continue;
      }
      let r;
      try {
        r = await opts.gateway.submit({ kind: 'deposit', id: `${DEPOSIT_COMMAND_PREFIX}${ev.eventId}`, ts: now(), account: ev.account, amount: BigInt(ev.amount) });
      } catch (err) {
        // Transient: this row and the ones after it wait for the next round, in chain order.
        failure = err;
        break;
      }
      if (r.ok) {
        credited.push(ev);
        done.push(ev.eventId);
      } else {
        refusedNow.set(ev.eventId, { ev, code: r.code });
      }
    }
    const marked = new Set(await markCollateralEventsApplied(opts.db, done, now()));
    handled += marked.size;
    for (const id of await markCollateralEventsRefused(opts.db, [...refusedNow.keys()], now())) {
      const { ev, code } = refusedNow.get(id)!;
      // Once per row: it is marked now, and never submitted again.
      opts.logger?.error({ eventId: id, account: ev.account, amount: ev.amount, code }, 'perp collateral: deposit refused by the engine; kept as refused, not credited');
      handled++;
    }
    for (const ev of credited) {
      if (marked.has(ev.eventId)) continue;
      // Not marked now: applied before (a retry) or gone with a reorg since it was read.
      const row = await getCollateralEvent(opts.db, ev.eventId);
      if (row === undefined) await reverse(ev);
    }
    if (failure !== undefined) throw failure;
    for (const ev of await listOrphanedCollateralEvents(opts.db, limit)) {
      if (ev.kind === 'deposit' && !(await reverse(ev))) continue;
      handled += (await acknowledgeOrphanedCollateralEvents(opts.db, [ev.eventId])).length;
    }
    return handled;
  };

  const task = periodic(pollMs, async () => void (await runOnce()), (err) => opts.logger?.warn({ err }, 'perp collateral: round failed; retrying'));
  return { start: task.start, stop: task.stop, runOnce };
}
