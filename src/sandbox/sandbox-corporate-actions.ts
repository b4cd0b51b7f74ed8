/**
 * `POST /sandbox/v1/corporate-actions` (docs/sandbox.md, "Corporate actions"): schedules a split or a
 * cash dividend through the same registry as `tokex corporate-actions add` (the stack's database,
 * the same checks), which the executor's scheduler applies on chain (docs/corporate-actions.md).
 * `effective: "now"` dates it today: a dividend added on its ex-date takes effect at once, a split
 * at the first minute at least 5 s later (its quotes, balances, orders and perpetuals move together
 * at that minute). Where this process runs every role, the venue's clock is advanced to that
 * minute (the sandbox's own advance, every step's work included) rather than waited for on the
 * wall clock: the venue's time runs at the wall clock's pace, so a split added after an advance,
 * or on a frozen clock, would otherwise wait up to 65 s, or for ever. Such an action is answered
 * once the chain has it, with what was done; one dated later is answered scheduled at once.
 *
 * The state waited on is the stored one (`GET /api/v1/corporate-action`), so it does not matter
 * which process runs the executor, as long as one does.
 */
import type { SandboxCorporateAction, SandboxCorporateActionRequest, StockCorporateAction } from '@tokex/contract';
import { AppError, ConflictError, ValidationError } from '../errors/app-error.ts';
import type { Logger } from '../lib/logger.ts';
import { newYorkDate } from '../marketdata/corporate-actions.ts';
import { splitEffectiveAt } from '../marketdata/price-splits.ts';
import type { CorporateActionRegistry } from '../stock/corporate-actions/corporate-action-registry.ts';
import { venueNow } from '../lib/venue-clock.ts';
import { advanceVenueClockTo } from '../lib/venue-clock-walk.ts';

export interface SandboxCorporateActionDeps {
  /** The venue's registry (the stock API's, src/app/corporate-action-wiring.ts). */
  registry: () => Promise<CorporateActionRegistry>;
  /** The market calendar's clock minus the venue's (MARKET_CLOCK_START): the scheduler's clock is `now() + clockOffsetMs`. */
  clockOffsetMs: number;
  /**
   * The venue's clock, the one the registry dates an action by and the scheduler runs on before its
   * calendar shift. Default the wall clock. The waits below are on the wall clock whatever it is.
   */
  now?: () => number;
  logger: Pick<Logger, 'info'>;
  /** Whether the chain is stalled on purpose (the chain-stall fault): an action due now would not be applied. */
  stalled?: () => boolean;
  /** How long past its moment an action due now may take to be applied. Default 60 s. */
  applyWaitMs?: number;
  /** Between two reads of its state. Default 200 ms. */
  pollMs?: number;
  /**
   * Moves the venue's clock to a time (ms) through the sandbox's advance; false where it cannot
   * (not every role in this process). Default the process's sandbox clock (venue-clock-walk.ts).
   */
  advanceTo?: (ms: number) => Promise<boolean>;
}

/** The scheduler's tick (5 s by default), the indexer's catching up for a dividend's holders, and a margin. */
export const APPLY_WAIT_MS = 60_000;

const DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;

/** The fields each kind takes besides `symbol`, `kind` and `effective`. */
const FIELDS: Record<SandboxCorporateActionRequest['kind'], readonly string[]> = {
  split: ['ratio', 'recordDate'],
  dividend: ['amount', 'currency', 'recordDate'],
};

/** A registry refusal of the ex-date is about `effective`, the field this route takes it in. */
function renamed(err: unknown): unknown {
  if (err instanceof ValidationError && err.field === 'exDate') return new ValidationError('effective', err.message.slice('exDate: '.length));
  return err;
}

export function createSandboxCorporateActions(deps: SandboxCorporateActionDeps) {
  const applyWaitMs = deps.applyWaitMs ?? APPLY_WAIT_MS;
  const pollMs = deps.pollMs ?? 200;
  const offset = deps.clockOffsetMs;
  const now = deps.now ?? venueNow;
  const advanceTo = deps.advanceTo ?? advanceVenueClockTo;

  /** The action as the stock API lists it now. */
  const current = async (registry: CorporateActionRegistry, symbol: string, exDate: string): Promise<StockCorporateAction | undefined> =>
    (await registry.list(symbol)).find((a) => a.exDate === exDate);

  return {
    async schedule(body: SandboxCorporateActionRequest): Promise<SandboxCorporateAction> {
      const allowed = FIELDS[body.kind];
      for (const key of Object.keys(body)) {
        if (!['symbol', 'kind', 'effective', ...allowed].includes(key)) throw new ValidationError(key, `not a field of kind ${body.kind} (it takes ${allowed.join(', ')})`);
      }
      if (body.kind === 'split' && body.ratio === undefined) throw new ValidationError('ratio', 'required for kind split: new:old shares, like "2:1"');
      if (body.kind === 'dividend' && body.amount === undefined) throw new ValidationError('amount', 'required for kind dividend: the cash per share, like "0.25"');
      const effective = body.effective ?? 'now';
      if (effective !== 'now' && !DATE.test(effective)) throw new ValidationError('effective', '"now" or an ex-date YYYY-MM-DD (New York)');
      // Today as the CLI takes it: the venue clock's date in New York.
      const exDate = effective === 'now' ? newYorkDate(now()) : effective;
      // Refused before it is stored: stored, it would stand applied later, after this answer's wait.
      if (deps.stalled?.() === true && exDate <= newYorkDate(now() + offset)) {
        throw new ConflictError('corporate-actions: the chain is stalled by the chain-stall fault, and an action due now would not be applied; DELETE /sandbox/v1/faults first');
      }
      const registry = await deps.registry();
      const added = await registry
        .add({
          symbol: body.symbol.trim().toUpperCase(),
          type: body.kind === 'split' ? 'SPLIT' : 'DIVIDEND',
          exDate,
          ...(body.recordDate !== undefined ? { recordDate: body.recordDate } : {}),
          ...(body.ratio !== undefined ? { ratio: body.ratio } : {}),
          ...(body.amount !== undefined ? { amount: body.amount } : {}),
          ...(body.currency !== undefined ? { currency: body.currency } : {}),
        })
        .catch((err: unknown) => {
          throw renamed(err);
        });
      const { actionId, symbol } = added;
      deps.logger.info({ actionId, type: added.type, exDate }, 'sandbox: corporate action scheduled');

      // Due by the scheduler's clock (the market calendar's), which may run ahead of the wall clock.
      if (added.exDate > newYorkDate(now() + offset)) {
        const action = await current(registry, symbol, exDate);
        return { actionId, applied: false, action: action! };
      }
      // Its moment on the venue's clock: a dividend's is now, a split's the minute splitEffectiveAt
      // names; waited for on the wall clock (the venue's may be moved, or stand still).
      const moment = added.type === 'SPLIT' ? splitEffectiveAt(added.exDate, added.createdAt + offset) - offset : now();
      if (moment > now()) {
        // The split's minute reached by moving the venue there: its last step applies it, with the
        // quotes and the perpetuals. Where the clock cannot be moved (or the move fails), waited for.
        try {
          if (await advanceTo(moment)) deps.logger.info({ actionId, to: moment }, 'sandbox: the venue\'s clock advanced to the split\'s moment');
        } catch (err) {
          deps.logger.info({ actionId, err: (err as Error).message }, 'sandbox: the venue\'s clock could not be advanced to the split\'s moment; waiting for it');
        }
      }
      const started = Date.now();
      const deadline = started + Math.max(moment - now(), 0) + applyWaitMs;
      for (;;) {
        const action = await current(registry, symbol, exDate);
        if (action?.status === 'applied') {
          deps.logger.info({ actionId, txHash: action.txHash }, 'sandbox: corporate action applied');
          return { actionId, applied: true, action };
        }
        if (action?.status === 'failed') {
          throw new ConflictError(`corporate-actions: ${actionId} failed: ${action.reason ?? 'no reason recorded'}; it stays failed (tokex corporate-actions retry ${actionId} puts it back on the schedule)`);
        }
        if (Date.now() >= deadline) {
          throw new AppError(
            'STORAGE_UNAVAILABLE',
            `corporate-actions: ${actionId} is scheduled but was not applied within ${Math.round((deadline - started) / 1000)} s (does this stack run the executor role?); it stays scheduled: GET /api/v1/corporate-action shows its state`,
            { retryable: true },
          );
        }
        await new Promise((r) => setTimeout(r, pollMs));
      }
    },
  };
}

export type SandboxCorporateActions = ReturnType<typeof createSandboxCorporateActions>;
