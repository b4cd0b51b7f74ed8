/**
 * Which splits a corporate-action run takes up, and handing each to the split applier
 * (split-applier.ts, which makes the owner's call on the Stock token). The run itself, the
 * dividends and the failure handling are dividend-scheduler.ts's; the splits' part is here, apart
 * from the dividends' three steps, because their timing differs: a split through a timelock is
 * scheduled its delay before its moment.
 */
import { AppError } from '../../errors/app-error.ts';
import { newYorkDate } from '../../marketdata/corporate-actions.ts';
import type { DbExecutor } from '../../storage/database.ts';
import { listDueActions, type CorporateActionRecord } from './corporate-action-store.ts';
import type { SplitApplier } from './split-applier.ts';

export interface SplitScheduler {
  /**
   * The splits due before their day that a run at `t` takes up besides `due` (the actions due by
   * `t`'s date, in the order listed): those within the timelock's delay of their date. None without
   * a timelock.
   */
  dueAhead(due: readonly CorporateActionRecord[], t: number): Promise<CorporateActionRecord[]>;
  /** Applies (or schedules, through a timelock) a due split: its state after this run's work on it. */
  apply(a: CorporateActionRecord, signal: AbortSignal): Promise<'applied' | 'waiting'>;
}

export function createSplitScheduler(opts: { db: DbExecutor; splits?: SplitApplier }): SplitScheduler {
  const { db, splits } = opts;
  return {
    async dueAhead(due, t) {
      // A split through a timelock is scheduled its delay before its moment: the applier sees it from
      // then on (it waits until exactly the delay before, and acts on nothing earlier).
      const lead = splits ? await splits.leadMs().catch(() => 0) : 0;
      if (lead <= 0) return [];
      const listed = new Set(due.map((a) => a.actionId));
      return (await listDueActions(db, newYorkDate(t + lead))).filter((a) => a.type === 'SPLIT' && !listed.has(a.actionId));
    },
    async apply(a, signal) {
      if (!splits) throw new AppError('VALIDATION', 'splits are not applied by this process (no split applier)');
      return splits.apply(a, signal);
    },
  };
}
