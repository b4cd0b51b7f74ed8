/**
 * Demo only: the market maker's wallet puts part of its collateral into the liquidity pool once it is
 * credited, so that a new install has a pool that quotes every book and backstops liquidations
 * (docs/perp-risk.md "The liquidity pool"). The command id is fixed: the journal makes it happen once
 * for the life of the data, restarts included.
 */
import { periodic, type PeriodicTask } from '../../lib/async.ts';
import type { Logger } from '../../lib/logger.ts';
import type { PerpEngine } from '../engine/perp-engine.ts';
import type { EngineGateway } from '../sequencer/engine-gateway.ts';
import { venueNow } from '../../lib/venue-clock.ts';

export const DEMO_POOL_SEED_ID = 'demo-pool-seed';

export function createDemoPoolSeedTask(opts: {
  gateway: Pick<EngineGateway, 'submit'>;
  engine: () => PerpEngine;
  account: string;
  /** Micro-USD. */
  amount: bigint;
  lockupMs: number;
  now?: () => number;
  logger?: Pick<Logger, 'info' | 'warn'>;
}): PeriodicTask {
  const account = opts.account.toLowerCase();
  const now = opts.now ?? venueNow;
  let done = false;
  return periodic(
    1_000,
    async () => {
      if (done) return;
      const engine = opts.engine();
      if (engine.lpPosition(account) !== undefined) {
        done = true;
        return;
      }
      const margin = engine.marginSummary(account);
      if (margin === undefined || margin.withdrawable < opts.amount) return;
      const r = await opts.gateway.submit({ kind: 'addLiquidity', id: DEMO_POOL_SEED_ID, ts: now(), account, amount: opts.amount, lockupMs: opts.lockupMs });
      done = true;
      if (r.ok) opts.logger?.info({ account, amount: opts.amount.toString() }, 'perp demo: the market maker seeded the liquidity pool');
      else opts.logger?.warn({ code: r.code }, 'perp demo: the liquidity pool was not seeded');
    },
    (err) => opts.logger?.warn({ err }, 'perp demo: pool seed round failed'),
  );
}
