/**
 * A lease on a singleton's name in the shared database, so that a second copy of a singleton role
 * waits instead of acting twice (docs/deployment.md "Leases").
 *
 * No clocks are compared between hosts. The holder raises `beat` every TTL/5. A waiter takes over
 * when it has seen the same (token, beat) for a whole TTL on its own monotonic clock, with one
 * compare-and-set that also raises the fencing token. The holder counts its lease lost once TTL/2
 * has passed since the start of its last successful renewal (or when a renewal finds the row
 * changed), so it stops at least TTL/2 before any waiter can take over, whatever the database's
 * latency. A holder on this host whose process is gone is taken over at once (a restart after a
 * kill does not wait a TTL), as is a lease released on a clean stop.
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../lib/logger.ts';
import type { DbExecutor } from './database.ts';
import { insertLease, readLease, releaseLease, renewLease, takeOverLease, type LeaseRow } from './lease-store.ts';

export interface LeaseKeeperOptions {
  db: DbExecutor;
  name: string;
  ttlMs: number;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** This holder's id; default `<host>:<pid>:<random>`. */
  holder?: string;
}

export interface HeldLease {
  readonly name: string;
  readonly holder: string;
  /** The fencing token of this tenure. */
  readonly token: bigint;
  /** Settles, once, with the reason the lease was lost; never when released. */
  readonly lost: Promise<string>;
  /** Stops renewing and frees the lease for a waiter. */
  release(): Promise<void>;
}

export interface LeaseKeeper {
  readonly holder: string;
  /** One look: the lease if free, abandoned, or its holder silent for a TTL since first seen; else undefined. */
  tryAcquire(): Promise<HeldLease | undefined>;
}

/** Holders alive in this process: a holder with this pid but not in here is an abandoned tenure. */
const liveHolders = new Set<string>();

export function newHolderId(): string {
  return `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/** True when `holder` names a process on this host that no longer runs (or a tenure of this process that ended). */
function holderGone(holder: string): boolean {
  const m = /^(.*):(\d+):[0-9a-f]+$/.exec(holder);
  if (!m || m[1] !== os.hostname()) return false;
  const pid = Number(m[2]);
  if (pid === process.pid) return !liveHolders.has(holder);
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    // EPERM: a process with that pid runs under another user; it may be the holder.
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

export function createLeaseKeeper(opts: LeaseKeeperOptions): LeaseKeeper {
  const { db, name, ttlMs, logger } = opts;
  const holder = opts.holder ?? newHolderId();
  /** The (token, beat) last seen of another holder, and when (monotonic ms) it was first seen. */
  let seen: { token: bigint; beat: bigint; holder: string; since: number } | undefined;

  const hold = (token: bigint): HeldLease => {
    liveHolders.add(holder);
    let lastRenewStart = performance.now();
    let done = false;
    let renewing = false;
    let settleLost!: (reason: string) => void;
    const lost = new Promise<string>((resolve) => (settleLost = resolve));
    const end = (reason?: string) => {
      if (done) return;
      done = true;
      clearInterval(timer);
      liveHolders.delete(holder);
      if (reason !== undefined) {
        logger.error({ lease: name, token: token.toString(), reason }, 'lease lost: stopping its work');
        settleLost(reason);
      }
    };
    const timer = setInterval(() => {
      if (done) return;
      if (performance.now() - lastRenewStart > ttlMs / 2) return end(`not renewed for ${Math.round(ttlMs / 2)} ms`);
      if (renewing) return;
      renewing = true;
      const started = performance.now();
      renewLease(db, name, holder, token, Date.now())
        .then((ok) => {
          if (done) return;
          if (ok) lastRenewStart = started;
          else end('taken over by another holder');
        })
        .catch((err) => logger.warn({ lease: name, err: (err as Error).message }, 'lease: renewal failed'))
        .finally(() => (renewing = false));
    }, Math.max(20, Math.floor(ttlMs / 10)));
    timer.unref();
    return {
      name,
      holder,
      token,
      lost,
      async release() {
        if (done) return;
        end();
        try {
          await releaseLease(db, name, holder, token, Date.now());
        } catch (err) {
          logger.warn({ lease: name, err: (err as Error).message }, 'lease: release failed; a waiter takes over after the TTL');
        }
      },
    };
  };

  const takeOver = async (row: LeaseRow, why: string): Promise<HeldLease | undefined> => {
    const token = await takeOverLease(db, name, holder, row, Date.now());
    if (token === undefined) return undefined;
    seen = undefined;
    logger.info({ lease: name, token: token.toString(), previous: row.holder || undefined, why }, 'lease acquired');
    return hold(token);
  };

  return {
    holder,
    async tryAcquire() {
      const row = await readLease(db, name);
      if (!row) {
        if (await insertLease(db, name, holder, Date.now())) {
          logger.info({ lease: name, token: '1' }, 'lease acquired');
          return hold(1n);
        }
        return undefined;
      }
      if (row.holder === '') return takeOver(row, 'released');
      // Our own row while we hold it: nothing to take. Our own row after our tenure ended (lost to a
      // stalled event loop, say) means no one else has taken it: take it back now, with a new token,
      // rather than wait for ourselves (issue 27: a single-process stack waited for ever).
      if (row.holder === holder) return liveHolders.has(holder) ? undefined : takeOver(row, 'own tenure ended; no one took it');
      if (holderGone(row.holder)) return takeOver(row, 'holder process gone');
      const now = performance.now();
      if (!seen || seen.token !== row.token || seen.beat !== row.beat) {
        seen = { token: row.token, beat: row.beat, holder: row.holder, since: now };
        return undefined;
      }
      if (now - seen.since < ttlMs) return undefined;
      return takeOver(row, `silent for ${Math.round(now - seen.since)} ms`);
    },
  };
}
