/**
 * The executor's environment settings, parsed with the rest of the configuration so that the config
 * layer imports nothing above it; the executor role hands them to `createStockExecutor`.
 */
import { parseUnits } from 'viem';
import { AppError } from '../errors/app-error.ts';
import { envBool, envInt, envString, type Env } from './env.ts';

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

/** Stock tokens have 18 decimals; a max-fill quantity is given in whole stock units. */
const STOCK_UNIT_DECIMALS = 18;

/**
 * `EXECUTOR_MAX_FILL` = comma-separated `SYMBOL=quantity` (decimal stock quantity), e.g.
 * `AAPL=10,TSLA=2.5`; `*=quantity` applies to every symbol without its own entry.
 */
export function parseMaxFill(raw: string | undefined): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  if (!raw || raw.trim() === '') return out;
  for (const part of raw.split(',')) {
    const m = /^\s*([A-Za-z0-9.*_-]+)\s*=\s*(\d+(?:\.\d{1,18})?)\s*$/.exec(part);
    if (!m) throw new AppError('VALIDATION', 'EXECUTOR_MAX_FILL: expected SYMBOL=quantity[,SYMBOL=quantity…]');
    const quantity = parseUnits(m[2], STOCK_UNIT_DECIMALS);
    if (quantity === 0n) throw new AppError('VALIDATION', `EXECUTOR_MAX_FILL: ${m[1]} must be greater than zero`);
    out[m[1] === '*' ? '*' : m[1].toUpperCase()] = quantity;
  }
  return out;
}

export function loadExecutorSettings(env: Env = process.env): ExecutorSettings {
  const gas = envString(env, 'EXECUTOR_MAX_BATCH_GAS');
  if (gas !== undefined && !/^[1-9]\d*$/.test(gas)) throw new AppError('VALIDATION', 'EXECUTOR_MAX_BATCH_GAS: must be a positive integer');
  return {
    tickMs: envInt(env, 'EXECUTOR_TICK_MS', 1_000, 10),
    batchSize: envInt(env, 'EXECUTOR_BATCH_SIZE', 200, 1),
    maxBatchGas: gas ? BigInt(gas) : 25_000_000n,
    maxInFlightBatches: envInt(env, 'EXECUTOR_MAX_IN_FLIGHT', 4, 1),
    simulateFirst: envBool(env, 'EXECUTOR_SIMULATE_FIRST', false),
    cashSettleDelayMs: envInt(env, 'CASH_SETTLE_DELAY_MS', 5_000),
    maxFill: parseMaxFill(envString(env, 'EXECUTOR_MAX_FILL')),
    quoteMaxAgeMs: envInt(env, 'EXECUTOR_QUOTE_MAX_AGE_MS', 30_000, 1),
    noQuoteTimeoutMs: envInt(env, 'EXECUTOR_NO_QUOTE_TIMEOUT_MS', 60_000),
  };
}
