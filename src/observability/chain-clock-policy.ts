/**
 * The chain's clock against the wall clock (docs/operations.md, "The chain's clock"): how far the
 * latest block's timestamp is from this host's time, and which of the venue's time checks that
 * difference makes fail for every transaction. Pure: the executor role measures and publishes the
 * figures (src/chain/chain-clock-monitor.ts), and `/readyz`, `tokex status` and the start banner
 * judge them here, from the `role_status` row, without a call to the node.
 *
 * Why it matters: the venue's contracts compare `block.timestamp` with times stamped off chain.
 * The StockRouter refuses a fill whose oracle answer (stamped with the price's observation time,
 * docs/security.md) is older than `maxAge` by the block's clock, so a chain whose clock runs ahead
 * (Hardhat's node gives every block of a burst its own second) makes every fresh answer look old
 * and halts every stock fill for good, while every role still makes progress. A chain behind the
 * wall clock by more than the PriceFeedHub's `MAX_CLOCK_SKEW` has every price update refused as
 * observed in the future, so the answers age until the same check refuses the fills.
 */

/**
 * What the executor role publishes in its `role_status` detail (`chainClock`): numbers only (a
 * detail's per-key record), times in wall-clock or chain ms, bounds in seconds as the contracts
 * state them. A bound the chain does not have (no feed, no hub) is absent.
 */
export interface ChainClockFigures {
  /** The latest block's timestamp, ms (seconds × 1000: blocks carry whole seconds). */
  chainTime: number;
  /** Its number. */
  block: number;
  /** This host's wall clock when the block was read, ms. */
  readAt: number;
  /**
   * The chain's clock minus the wall clock, ms: positive ahead, negative behind
   * ({@link measureChainSkew}).
   */
  skewMs: number;
  /** The smallest `maxAge` of the stocks' oracle checks on the StockRouter, seconds. */
  oracleMaxAgeS?: number;
  /** The executor's margin before that age (it does not rely on an answer this close to it), seconds. */
  oracleAgeMarginS?: number;
  /** `PriceFeedHub.MAX_CLOCK_SKEW`: how far past the block an observation may be, seconds. */
  hubMaxClockSkewS?: number;
}

/** Which time check the skew makes fail: the oracle's age (chain ahead) or the hub's future allowance (chain behind). */
export type ClockCheck = 'oracle-max-age' | 'hub-clock-skew';

/** A time check of the stock venue that the chain's clock makes fail for every fill. */
export interface ClockRefusal {
  check: ClockCheck;
  /** The chain's time and the wall clock's at the reading, ms. */
  chainTime: number;
  wallTime: number;
  skewMs: number;
  /** The largest skew (seconds, ahead for the oracle's age, behind for the hub's) the check allows. */
  limitS: number;
  /** The sentence readiness shows: both times, the skew and the bound. */
  reason: string;
}

/**
 * The chain's clock minus the wall clock, ms, from the latest block read at `readAt`.
 *
 * Ahead is read straight off the latest block: the next block can only be later, so a block stamped
 * after the wall clock is a lead every transaction inherits. Behind cannot be read that way: on an
 * idle chain (anvil mines only on a transaction) the latest block is simply old. So a block counts
 * for behind only when it was seen appearing (`firstSeenAt`: the poll that first saw it, at most
 * one poll interval after it was mined), and the last such measure stands until a newer block is
 * seen. Undefined `behindMs` (no block seen appearing yet): in step.
 */
export function measureChainSkew(chainTimeMs: number, readAt: number, behindMs: number | undefined): number {
  const lead = chainTimeMs - readAt;
  if (lead > 0) return lead;
  return behindMs !== undefined && behindMs < 0 ? behindMs : 0;
}

/** The behind measure of a block seen appearing at `firstSeenAt` (negative: behind; a block stamped in whole seconds reads up to 1 s behind plus the poll interval). */
export function skewAtFirstSight(chainTimeMs: number, firstSeenAt: number): number {
  return chainTimeMs - firstSeenAt;
}

/** Whole seconds of a skew, for sentences: rounded half away from zero. */
export function skewSeconds(skewMs: number): number {
  return Math.sign(skewMs) * Math.round(Math.abs(skewMs) / 1000);
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The time check the figures make fail for every stock fill, or undefined while every check holds.
 *
 * - Ahead: the executor refuses an answer within `oracleAgeMarginS` of `maxAge` (the settling block
 *   comes after its read), and the StockRouter at `maxAge`; a lead of `maxAge − margin` makes even
 *   an answer observed this very second too old for the executor, so no fill is ever sent.
 * - Behind: an update observed more than `MAX_CLOCK_SKEW` after the block is refused by the hub, and
 *   every quote the publisher sends is observed now, so no feed gets a new round again; the fills
 *   stop once the last answers pass `maxAge` by the chain's clock.
 */
export function judgeChainClock(f: ChainClockFigures): ClockRefusal | undefined {
  const skewS = skewSeconds(f.skewMs);
  const times = `(chain ${iso(f.chainTime)} at block ${f.block}, wall ${iso(f.readAt)})`;
  if (f.oracleMaxAgeS !== undefined && f.skewMs > 0) {
    const margin = f.oracleAgeMarginS ?? 0;
    const limitS = f.oracleMaxAgeS - margin;
    if (f.skewMs >= limitS * 1000) {
      const bound = margin > 0 ? `; the executor allows at most ${limitS} s ahead: the oracle's age less its ${margin} s margin` : '';
      return {
        check: 'oracle-max-age',
        chainTime: f.chainTime,
        wallTime: f.readAt,
        skewMs: f.skewMs,
        limitS,
        reason: `chain clock ${skewS} s ahead ${times}; stock fills are refused past the oracle's ${f.oracleMaxAgeS} s age (maxAge)${bound}`,
      };
    }
  }
  if (f.hubMaxClockSkewS !== undefined && f.skewMs < 0 && -f.skewMs > f.hubMaxClockSkewS * 1000) {
    return {
      check: 'hub-clock-skew',
      chainTime: f.chainTime,
      wallTime: f.readAt,
      skewMs: f.skewMs,
      limitS: f.hubMaxClockSkewS,
      reason: `chain clock ${-skewS} s behind ${times}; the PriceFeedHub refuses prices observed more than ${f.hubMaxClockSkewS} s after the block (MAX_CLOCK_SKEW), so the oracle's answers age and stock fills stop`,
    };
  }
  return undefined;
}

const finiteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * The figures of a role's published detail (`detail.chainClock`), or undefined when it has none or
 * they are not numbers (a row written by another version).
 */
export function chainClockOf(detail: Record<string, unknown> | undefined): ChainClockFigures | undefined {
  const c = detail?.chainClock;
  if (c === null || typeof c !== 'object') return undefined;
  const r = c as Record<string, unknown>;
  if (!finiteNumber(r.chainTime) || !finiteNumber(r.block) || !finiteNumber(r.readAt) || !finiteNumber(r.skewMs)) return undefined;
  const opt = (v: unknown) => (finiteNumber(v) ? v : undefined);
  return {
    chainTime: r.chainTime,
    block: r.block,
    readAt: r.readAt,
    skewMs: r.skewMs,
    oracleMaxAgeS: opt(r.oracleMaxAgeS),
    oracleAgeMarginS: opt(r.oracleAgeMarginS),
    hubMaxClockSkewS: opt(r.hubMaxClockSkewS),
  };
}

/** The figures as a detail record (numbers only, absent bounds left out), the inverse of {@link chainClockOf}. */
export function chainClockDetail(f: ChainClockFigures): Record<string, number> {
  const out: Record<string, number> = { chainTime: f.chainTime, block: f.block, readAt: f.readAt, skewMs: f.skewMs };
  if (f.oracleMaxAgeS !== undefined) out.oracleMaxAgeS = f.oracleMaxAgeS;
  if (f.oracleAgeMarginS !== undefined) out.oracleAgeMarginS = f.oracleAgeMarginS;
  if (f.hubMaxClockSkewS !== undefined) out.hubMaxClockSkewS = f.hubMaxClockSkewS;
  return out;
}
