/**
 * A singleton role under a lease (src/storage/lease-keeper.ts): a copy that finds the lease held
 * waits on stand-by, looking every TTL/5, and starts the role once it holds the lease; a holder
 * that loses its lease stops the role and waits again. The first look happens before the process
 * goes on with its other roles, so a single process (the embedded stack) starts its roles in order
 * as before; only a stand-by copy starts in the background.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createLeaseKeeper, type HeldLease } from '../storage/lease-keeper.ts';
import type { StackContext, StartRole } from './stack-context.ts';

export function leasedRole(role: string, start: StartRole): StartRole {
  return async (ctx: StackContext) => {
    const { logger } = ctx;
    const ttlMs = ctx.config.leaseTtlMs;
    const keeper = createLeaseKeeper({ db: ctx.db, name: `role:${role}`, ttlMs, logger });
    const abort = new AbortController();
    let held: HeldLease | undefined;
    let stopRole: (() => Promise<void>) | undefined;
    let stopping = false;
    /** Set while the role stops after a lost lease (a released lease is never lost). */
    let losing: Promise<void> | undefined;
    /** The stand-by loop, awaited on stop so a take-over in progress finishes before the role stops. */
    let standby: Promise<void> = Promise.resolve();

    const status = ctx.status;
    const runHeld = async (lease: HeldLease): Promise<void> => {
      held = lease;
      status.setLease(role, 'held');
      try {
        stopRole = await start(ctx);
      } catch (err) {
        held = undefined;
        status.setLease(role, 'released');
        await lease.release();
        throw err;
      }
      if (stopping) return;
      void lease.lost.then((reason) => {
        // Said at error level and shown by /readyz, `tokex status` and the metrics; the stand-by
        // loop below takes the lease back as soon as it is free (at once when no one else took it).
        logger.error({ role, reason }, 'role stopped: its lease was lost; taking it back when free');
        status.setLease(role, 'lost');
        losing = (async () => {
          const stop = stopRole;
          stopRole = undefined;
          held = undefined;
          await stop?.().catch((err) => logger.error({ role, err }, 'role: stop after a lost lease failed'));
          if (!stopping) waitInBackground();
        })();
      });
    };

    const waitInBackground = () => {
      const afterLoss = status.leaseState(role) === 'lost';
      if (!afterLoss) status.setLease(role, 'standby');
      logger.info({ role, holder: keeper.holder, ttlMs }, afterLoss ? 'role on stand-by until it has its lease back' : 'role on stand-by: another process holds its lease');
      standby = (async () => {
        while (!stopping) {
          try {
            await sleep(Math.max(50, Math.floor(ttlMs / 5)), undefined, { signal: abort.signal });
            const lease = await keeper.tryAcquire();
            if (!lease) continue;
            if (stopping) {
              await lease.release();
              return;
            }
            await runHeld(lease);
            logger.info({ role, token: lease.token.toString() }, 'role taken over from stand-by');
            return;
          } catch (err) {
            if (stopping) return;
            logger.error({ role, err }, 'role: could not take over; trying again');
          }
        }
      })();
    };

    const first = await keeper.tryAcquire();
    if (first) await runHeld(first);
    else waitInBackground();

    return async () => {
      stopping = true;
      abort.abort();
      await standby;
      const stop = stopRole;
      stopRole = undefined;
      await stop?.();
      await held?.release();
      held = undefined;
      await losing;
      status.setLease(role, 'released');
    };
  };
}
