/**
 * The executor's environment settings, parsed once. The role wiring passes the result to
 * `createStockExecutor` along with the clients, deployment, quotes and calendar it already has.
 */
import { parseUnits } from 'viem';

export interface ExecutorSettings {
  /** `EXECUTOR_TICK_MS`, default 1000. */
  tickMs: number;
  /** `EXECUTOR_BATCH_SIZE`, default 200 orders per settleOrders transaction. */
  batchSize: number;
  /** `EXECUTOR_MAX_BATCH_GAS`, default 25,000,000 (capped at 90% of the block gas limit). */
  maxBatchGas: bigint;
  /** `EXECUTOR_MAX_IN_FLIGHT`, default 4 batches. */
  maxInFlightBatches: number;
  /** `EXECUTOR_SIMULATE_FIRST` (`true`/`1`): simulate every batch before sending it. Default false. */
  simulateFirst: boolean;
  /** `CASH_SETTLE_DELAY_MS`, default 5000. */
  cashSettleDelayMs: number;
  /** `EXECUTOR_MAX_FILL`: per symbol, the largest quantity (stock units, 18 decimals) one fill takes. */
  maxFill: Record<string, bigint>;
  /** `EXECUTOR_QUOTE_MAX_AGE_MS`, default 30000. */
  quoteMaxAgeMs: number;
  /** `EXECUTOR_NO_QUOTE_TIMEOUT_MS`, default 60000. */
  noQuoteTimeoutMs: number;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, minimum = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < minimum) throw new Error(`${name}: must be an integer of at least ${minimum}`);
  return n;
}

/**
 * `EXECUTOR_MAX_FILL` = comma-separated `SYMBOL=quantity` (decimal stock quantity), e.g.
 * `AAPL=10,TSLA=2.5`; `*=quantity` applies to every symbol without its own entry.
 */
export function parseMaxFill(raw: string | undefined): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  if (!raw || raw.trim() === '') return out;
  for (const part of raw.split(',')) {
    const m = /^\s*([A-Za-z0-9.*_-]+)\s*=\s*(\d+(?:\.\d{1,18})?)\s*$/.exec(part);
    if (!m) throw new Error('EXECUTOR_MAX_FILL: expected SYMBOL=quantity[,SYMBOL=quantity…]');
    const quantity = parseUnits(m[2], 18);
    if (quantity === 0n) throw new Error(`EXECUTOR_MAX_FILL: ${m[1]} must be greater than zero`);
    out[m[1] === '*' ? '*' : m[1].toUpperCase()] = quantity;
  }
  return out;
}

export function loadExecutorSettings(env: NodeJS.ProcessEnv = process.env): ExecutorSettings {
  const gas = env.EXECUTOR_MAX_BATCH_GAS;
  if (gas !== undefined && gas !== '' && !/^[1-9]\d*$/.test(gas)) throw new Error('EXECUTOR_MAX_BATCH_GAS: must be a positive integer');
  return {
    tickMs: int(env, 'EXECUTOR_TICK_MS', 1_000, 10),
    batchSize: int(env, 'EXECUTOR_BATCH_SIZE', 200, 1),
    maxBatchGas: gas ? BigInt(gas) : 25_000_000n,
    maxInFlightBatches: int(env, 'EXECUTOR_MAX_IN_FLIGHT', 4, 1),
    simulateFirst: ['1', 'true', 'yes'].includes((env.EXECUTOR_SIMULATE_FIRST ?? '').toLowerCase()),
    cashSettleDelayMs: int(env, 'CASH_SETTLE_DELAY_MS', 5_000),
    maxFill: parseMaxFill(env.EXECUTOR_MAX_FILL),
    quoteMaxAgeMs: int(env, 'EXECUTOR_QUOTE_MAX_AGE_MS', 30_000, 1),
    noQuoteTimeoutMs: int(env, 'EXECUTOR_NO_QUOTE_TIMEOUT_MS', 60_000),
  };
}
