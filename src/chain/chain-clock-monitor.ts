/**
 * Reads the chain's clock (the latest block's timestamp) against this host's wall clock every
 * `intervalMs`, with the bounds the stock venue's time checks take from the chain: the smallest
 * oracle `maxAge` the StockRouter applies to a listed stock, and the PriceFeedHub's
 * `MAX_CLOCK_SKEW`. The executor role publishes the figures in its `role_status` row, so `/readyz`
 * and `tokex status` judge them (src/observability/chain-clock-policy.ts) without a call to the
 * node per request; this poll is the only reader, one `eth_getBlockByNumber` a poll.
 *
 * A change of verdict is logged once: at error level when a check fails for every fill (the
 * venue is halted by a clock, which nothing else would say), at info level when it holds again.
 */
import { getAddress, type Address } from 'viem';
import { AppError, ChainRevertError } from '../errors/app-error.ts';
import { periodic, type PeriodicTask } from '../lib/async.ts';
import type { Logger } from '../lib/logger.ts';
import { judgeChainClock, measureChainSkew, skewAtFirstSight, type ChainClockFigures } from '../observability/chain-clock-policy.ts';
import { priceFeedHubAbi, stockRouterAbi } from './abi/generated/index.ts';
import { toChainError, type ChainPublicClient } from './chain-client.ts';
import { venueChainNow } from '../lib/venue-clock.ts';

export interface ChainClockMonitorOptions {
  publicClient: ChainPublicClient;
  /** Between reads of the latest block. Default 2 000 (the status publisher's interval). */
  intervalMs?: number;
  /** Where the bounds are read; without it the figures carry none and nothing fails. */
  venue?: {
    stockRouter: Address;
    /** The listed stocks, whose oracle checks are read. */
    stocks: readonly Address[];
    /** The PriceFeedHub, when the venue has one. */
    hub?: () => Address | undefined;
    /** The executor's margin before an answer's maximum age (fill-policy's DEFAULT_ORACLE_AGE_MARGIN_S). */
    oracleAgeMarginS: number;
  };
  /** Between reads of the bounds (owner changes go through the timelock: rare). Default 60 000. */
  boundsRefreshMs?: number;
  now?: () => number;
  logger?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export interface ChainClockMonitor {
  start(): void;
  stop(): Promise<void>;
  /** One read now (the poll's body); throws what failed. */
  refresh(): Promise<void>;
  /** The last reading, undefined before the first. */
  figures(): ChainClockFigures | undefined;
}

interface Bounds {
  oracleMaxAgeS?: number;
  hubMaxClockSkewS?: number;
}

export function createChainClockMonitor(opts: ChainClockMonitorOptions): ChainClockMonitor {
  const intervalMs = opts.intervalMs ?? 2_000;
  if (!Number.isInteger(intervalMs) || intervalMs < 1) throw new AppError('INTERNAL', 'chain clock monitor: intervalMs must be a positive integer');
  const now = opts.now ?? venueChainNow;
  const { publicClient, venue, logger } = opts;
  const boundsRefreshMs = opts.boundsRefreshMs ?? 60_000;

  let last: ChainClockFigures | undefined;
  /** The newest block seen and, when it was seen appearing, its skew then (the measure of behind). */
  let newest: { block: bigint; behindMs?: number } | undefined;
  let bounds: Bounds = {};
  let boundsReadAt: number | undefined;
  /** The check failing at the last reading, so a verdict is logged once per change. */
  let failing: string | undefined;

  const readBounds = async (): Promise<Bounds> => {
    if (!venue) return {};
    const readings = await Promise.all(
      venue.stocks.map((stock) =>
        publicClient.readContract({ address: venue.stockRouter, abi: stockRouterAbi, functionName: 'oracleReading', args: [getAddress(stock)] }).then(
          ([config]) => config,
          (err: unknown) => {
            // A stock whose feed reverts is the executor's business (it refuses its fills); its bound is unknown here.
            if (toChainError(err) instanceof ChainRevertError) return undefined;
            throw toChainError(err);
          },
        ),
      ),
    );
    let oracleMaxAgeS: number | undefined;
    for (const c of readings) {
      if (c === undefined || BigInt(c.feed) === 0n) continue;
      const age = Number(c.maxAge);
      if (oracleMaxAgeS === undefined || age < oracleMaxAgeS) oracleMaxAgeS = age;
    }
    const hub = venue.hub?.();
    let hubMaxClockSkewS: number | undefined;
    if (hub !== undefined) {
      try {
        hubMaxClockSkewS = Number(await publicClient.readContract({ address: hub, abi: priceFeedHubAbi, functionName: 'MAX_CLOCK_SKEW' }));
      } catch (err) {
        // A hub from before the constant was public: its bound is not known here.
        if (!(toChainError(err) instanceof ChainRevertError)) throw toChainError(err);
      }
    }
    return { oracleMaxAgeS, hubMaxClockSkewS };
  };

  const refresh = async (): Promise<void> => {
    if (venue && (boundsReadAt === undefined || now() - boundsReadAt >= boundsRefreshMs)) {
      bounds = await readBounds();
      boundsReadAt = now();
    }
    let block: { number: bigint | null; timestamp: bigint };
    try {
      block = await publicClient.getBlock({ blockTag: 'latest' });
    } catch (err) {
      throw toChainError(err);
    }
    const readAt = now();
    const chainTime = Number(block.timestamp) * 1000;
    const number = block.number ?? 0n;
    // Seen appearing: a newer block than the last poll's (the first poll cannot tell how old its block is).
    if (newest === undefined) newest = { block: number };
    else if (number > newest.block) newest = { block: number, behindMs: skewAtFirstSight(chainTime, readAt) };
    else if (number < newest.block) newest = { block: number }; // a chain restarted from older state: measure again
    last = {
      chainTime,
      block: Number(number),
      readAt,
      skewMs: measureChainSkew(chainTime, readAt, newest.behindMs),
      ...(bounds.oracleMaxAgeS === undefined ? {} : { oracleMaxAgeS: bounds.oracleMaxAgeS, oracleAgeMarginS: venue?.oracleAgeMarginS }),
      ...(bounds.hubMaxClockSkewS === undefined ? {} : { hubMaxClockSkewS: bounds.hubMaxClockSkewS }),
    };
    const refusal = judgeChainClock(last);
    if (refusal?.check !== failing) {
      if (refusal) logger?.error({ check: refusal.check, skewMs: refusal.skewMs, limitS: refusal.limitS }, `chain clock: ${refusal.reason}`);
      else if (failing !== undefined) logger?.info({ skewMs: last.skewMs }, 'chain clock: within the venue\'s time checks again');
      failing = refusal?.check;
    }
  };

  let failures = 0;
  const task: PeriodicTask = periodic(
    intervalMs,
    async () => {
      await refresh();
      failures = 0;
    },
    (err) => {
      // The indexer and the executor say when the chain does not answer; once is enough here.
      if (failures++ === 0) logger?.warn({ err: err instanceof AppError ? err : toChainError(err) }, 'chain clock: the latest block could not be read; retrying');
    },
  );

  return {
    start: () => task.start(),
    stop: () => task.stop(),
    refresh,
    figures: () => last,
  };
}
