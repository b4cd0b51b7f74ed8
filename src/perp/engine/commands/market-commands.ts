/**
 * The price feed's commands: setMarkPrice (then the liquidation sweep of the accounts whose trigger
 * the new mark crossed, and the dead man's switches that are due) and applyFunding (then the sweep of
 * the accounts the payments left below maintenance).
 */
import type { Accepted, ApplyFundingCommand, Rejected, SetMarkPriceCommand } from '../engine-types.ts';
import { chargeFunding } from '../funding/apply-funding.ts';
import type { MatchPlan } from '../matching/match-plan.ts';
import { crossedBy, rearmDirty, sweep } from '../risk/liquidation.ts';
import type { Account } from '../state/entities.ts';
import { reject, type EngineState } from '../state/engine-state.ts';
import { checkBase, instrumentOf, isRejected, isSafeNonNegInt, isSafePosInt } from '../state/validate.ts';
import { fireCancelAfter } from './cancel-after-command.ts';
import { fireTriggers } from '../triggers/fire-triggers.ts';

/** Largest |rateE9| applyFunding accepts (10 % per interval). */
export const MAX_FUNDING_RATE_E9 = 100_000_000n;

export function setMarkPriceCommand(s: EngineState, plan: MatchPlan, cmd: SetMarkPriceCommand): Accepted | Rejected {
  const bad = checkBase(cmd);
  if (bad) return bad;
  const inst = instrumentOf(s, cmd.symbol);
  if (isRejected(inst)) return inst;
  const { markPriceTicks, indexPriceTicks } = cmd;
  if (!isSafePosInt(markPriceTicks) || markPriceTicks > inst.spec.maxPriceTicks) return reject('PRICE_OUT_OF_RANGE', 'markPriceTicks: 1..maxPriceTicks');
  if (!isSafePosInt(indexPriceTicks) || indexPriceTicks > inst.spec.maxPriceTicks) return reject('PRICE_OUT_OF_RANGE', 'indexPriceTicks: 1..maxPriceTicks');
  const indexTs = cmd.indexTs ?? cmd.ts;
  if (!isSafeNonNegInt(indexTs) || indexTs > cmd.ts) return reject('INVALID', 'indexTs: milliseconds, not after ts');
  if (cmd.marketOpen !== undefined && typeof cmd.marketOpen !== 'boolean') return reject('INVALID', 'marketOpen: a boolean');
  s.begin(cmd);
  inst.marketClosed = cmd.marketOpen === false;
  inst.markTicks = markPriceTicks;
  inst.indexTicks = indexPriceTicks;
  inst.markTs = cmd.ts;
  if (indexTs > inst.indexTs) inst.indexTs = indexTs;
  s.emit({ type: 'markPrice', symbol: inst.spec.symbol, markPriceTicks, indexPriceTicks, ...(inst.marketClosed ? { marketOpen: false as const } : {}) });
  fireCancelAfter(s, cmd.ts);
  // Stops before liquidation: a stop-loss that closes a position may spare its account the sweep.
  if (inst.triggers.size > 0) fireTriggers(s, plan, inst, 'MARK', markPriceTicks, cmd.ts);
  const candidates = crossedBy(inst);
  for (const a of rearmDirty(s)) candidates.add(a);
  if (candidates.size > 0) sweep(s, plan, candidates, cmd.ts);
  return { ok: true, code: 'OK', events: s.end() };
}

export function applyFundingCommand(s: EngineState, plan: MatchPlan, cmd: ApplyFundingCommand): Accepted | Rejected {
  const bad = checkBase(cmd);
  if (bad) return bad;
  const inst = instrumentOf(s, cmd.symbol);
  if (isRejected(inst)) return inst;
  const rate = cmd.rateE9;
  if (typeof rate !== 'bigint' || (rate < 0n ? -rate : rate) > MAX_FUNDING_RATE_E9) return reject('INVALID', `rateE9: a bigint with |rate| ≤ ${MAX_FUNDING_RATE_E9}`);
  s.begin(cmd);
  chargeFunding(s, inst, cmd);
  const below = new Set<Account>(rearmDirty(s));
  if (below.size > 0) sweep(s, plan, below, cmd.ts);
  return { ok: true, code: 'OK', events: s.end() };
}
