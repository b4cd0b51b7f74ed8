/**
 * Issue 39's per-chain roles report (bench/chain-roles-bench.ts): a role's throughput on each chain
 * while two chains run at once ÷ the same role on one chain alone, from the rounds of one run.
 *
 * Each figure is the best round, as the indexer section takes its best catch-up: on a host shared
 * with other work the noise only ever slows a round down. The total is the best round's sum over the
 * chains (not the sum of each chain's best, which may come from different rounds): what the host
 * does with two chains against what it does with one. Beside the best, the median of the rounds' own
 * ratios (a round's together ÷ the same round's alone, measured next to each other): when the host's
 * load drifts from round to round, the best alone and the best together may come from different
 * loads, and a round's pair shares one.
 */
import { median } from './bench-children.ts';

export interface PerChainRatio {
  /** Best rate of the role on one chain alone. */
  alone: number;
  /**
   * Each chain's best rate with both running, and that ÷ alone; the median over rounds of the round's
   * rate ÷ the round's alone; by ascending chain id.
   */
  chains: Array<{ chainId: number; rate: number; ratio: number; medianRatio: number }>;
  /** Best round's summed rate of every chain together, and that ÷ alone; the median of the rounds' sums ÷ their alone. */
  total: number;
  totalRatio: number;
  medianTotalRatio: number;
}

/**
 * `alone`: the rate of each alone round; `together`: each together round's rate by chain id, every
 * round naming the same chains, as many rounds as alone (round i of each measured next to each other).
 */
export function perChainRatio(alone: readonly number[], together: ReadonlyArray<Readonly<Record<number, number>>>): PerChainRatio {
  const rates = [...alone, ...together.flatMap((r) => Object.values(r))];
  if (alone.length === 0 || together.length !== alone.length || rates.some((r) => !(r > 0) || !Number.isFinite(r))) {
    throw new RangeError(`per-chain ratio: need positive rates, alone ${JSON.stringify(alone)}, together ${JSON.stringify(together)}`);
  }
  const ids = Object.keys(together[0]).map(Number);
  if (together.some((r) => Object.keys(r).length !== ids.length || ids.some((id) => !(id in r)))) {
    throw new RangeError(`per-chain ratio: rounds name different chains: ${JSON.stringify(together)}`);
  }
  const best = Math.max(...alone);
  const sums = together.map((r) => ids.reduce((sum, id) => sum + r[id], 0));
  const total = Math.max(...sums);
  return {
    alone: best,
    chains: ids.map((chainId) => {
      const rate = Math.max(...together.map((r) => r[chainId]));
      return { chainId, rate, ratio: rate / best, medianRatio: median(together.map((r, i) => r[chainId] / alone[i])) };
    }),
    total,
    totalRatio: total / best,
    medianTotalRatio: median(sums.map((sum, i) => sum / alone[i])),
  };
}
