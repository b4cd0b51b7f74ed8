/**
 * Before `tokex start` prints its banner: every role of the stack has published its status and is
 * fresh, so that `npx tokex status` and `/readyz` right after the banner answer as the README says
 * (all fresh) rather than "missing" for the up to STATUS_PUBLISH_MS (2 s) the publisher's timer
 * would otherwise take. Each round publishes at once instead of waiting for that timer. Bounded: a
 * role that is still not fresh at `timeoutMs` is named in the answer, and the banner says so; the
 * stack runs on either way.
 */
import { judgeReadiness } from '../observability/readiness.ts';
import type { StatusRole } from '../observability/role-status.ts';
import type { RoleStatusRow } from '../storage/role-status-store.ts';

export interface AwaitRolesFreshOptions {
  roles: readonly StatusRole[];
  /** Writes this process's role statuses now. */
  publish(): Promise<void>;
  /** Reads every role's published status. */
  read(): Promise<RoleStatusRow[]>;
  staleMs: number;
  timeoutMs: number;
  /** Between rounds. Default 100 ms. */
  intervalMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** Answers the roles not fresh at the deadline (`executor missing, …`); empty once all are. */
export async function awaitRolesFresh(opts: AwaitRolesFreshOptions): Promise<string> {
  if (opts.roles.length === 0) return '';
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const deadline = now() + opts.timeoutMs;
  for (;;) {
    // A failed write or read is one more round, not a failed start: the stack runs regardless.
    const report = await opts.publish().then(() => opts.read()).then(
      (rows) => judgeReadiness(rows, opts.roles, now(), opts.staleMs),
      () => undefined,
    );
    if (report?.ready) return '';
    if (now() >= deadline) return report?.summary ?? 'role status unreadable';
    await sleep(opts.intervalMs ?? 100);
  }
}
