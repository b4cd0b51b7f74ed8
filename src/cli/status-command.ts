/**
 * `tokex status` (contract.md §0 "operations", docs/operations.md): every singleton role of the
 * running stack with its state, last progress, age and lease holder, read where the roles publish
 * it (the `role_status` and `leases` tables of DATA_DIR's SQLite file or DATABASE_URL), or, with
 * `--url`, from an API's `/readyz`. Exit code 0 only when every role is fresh; 1 when one is stale
 * or missing; 2 when there is nothing to read (no stack at that place).
 */
import fs from 'node:fs';
import { Command } from 'commander';
import { loadConfig, type AppConfig } from '../config/app-config.ts';
import { table } from './cli-output.ts';

/** One row of the status table (and of `--json`). */
export interface RoleStatusLine {
  role: string;
  state: 'fresh' | 'stale' | 'missing';
  /** Wall-clock ms of the role's last progress. */
  progressAt?: number;
  ageMs?: number;
  lease?: string;
  holder?: string;
  detail?: Record<string, unknown>;
}

export interface StatusReport {
  ok: boolean;
  staleAfterMs: number;
  source: string;
  roles: RoleStatusLine[];
}

/** Nothing to report on: exit code 2 and one line saying why. */
export class NoStackError extends Error {}

/** Reads the tables of the stack configured by the environment (DATA_DIR or DATABASE_URL). */
export async function statusFromStorage(config: AppConfig, now = Date.now()): Promise<StatusReport> {
  const [{ openDatabase }, { sqlitePathOf }, { listRoleStatus }, { readLease }, { judgeReadiness }, { STATUS_ROLES, LEASE_OF }] = await Promise.all([
    import('../storage/database.ts'),
    import('../app/storage-wiring.ts'),
    import('../storage/role-status-store.ts'),
    import('../storage/lease-store.ts'),
    import('../observability/readiness.ts'),
    import('../observability/role-status.ts'),
  ]);
  const file = sqlitePathOf(config);
  if (!config.databaseUrl && !fs.existsSync(file)) {
    throw new NoStackError(`no tokex data in ${config.dataDir}: the stack has never run there (start it with npm start, or set DATA_DIR / DATABASE_URL, or give --url)`);
  }
  let db;
  try {
    // Never migrate from here: a status look must not change the stack's database.
    db = await openDatabase({ url: config.databaseUrl, schema: config.databaseUrl ? config.databaseSchema : undefined, sqlitePath: file, migrate: false, connectTimeoutMs: 3_000 });
  } catch (err) {
    throw new NoStackError(`cannot open the stack's database (${config.databaseUrl ? 'DATABASE_URL' : file}): ${(err as Error).message}`);
  }
  try {
    let rows;
    try {
      rows = await listRoleStatus(db);
    } catch {
      throw new NoStackError('the database has no role status yet: the stack there runs a version without it, or has never started');
    }
    const report = judgeReadiness(rows, STATUS_ROLES, now, config.readinessStaleMs);
    const byRole = new Map(rows.map((r) => [r.role, r]));
    const lines: RoleStatusLine[] = [];
    for (const r of report.roles) {
      const lease = await readLease(db, `role:${LEASE_OF[r.role]}`).catch(() => undefined);
      lines.push({
        role: r.role,
        state: r.state,
        progressAt: byRole.get(r.role)?.progressAt,
        ageMs: r.ageMs,
        lease: r.leaseState,
        holder: lease ? lease.holder || '(released)' : undefined,
        detail: r.detail,
      });
    }
    return { ok: report.ready, staleAfterMs: config.readinessStaleMs, source: config.databaseUrl ? 'DATABASE_URL' : file, roles: lines };
  } finally {
    await db.close();
  }
}

/** Reads an API's `/readyz` (either API; each names the roles it depends on). */
export async function statusFromUrl(url: string): Promise<StatusReport> {
  const base = url.replace(/\/+$/, '').replace(/\/(api\/v1|v4\/public\/trader)$/, '');
  let res: Response;
  try {
    res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5_000) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    throw new NoStackError(`cannot reach ${base}/readyz (${cause}): is the stack running there?`);
  }
  let body: { data?: { staleAfterMs?: number; roles?: Array<Record<string, unknown>> } };
  try {
    body = (await res.json()) as typeof body;
  } catch {
    throw new NoStackError(`${base}/readyz answered HTTP ${res.status} without a JSON body: not a tokex API`);
  }
  const roles = (body.data?.roles ?? []).map((r) => ({
    role: String(r.role),
    state: r.state as RoleStatusLine['state'],
    ageMs: typeof r.ageMs === 'number' ? r.ageMs : undefined,
    progressAt: typeof r.ageMs === 'number' ? Date.now() - r.ageMs : undefined,
    lease: typeof r.lease === 'string' ? r.lease : undefined,
    detail: r.detail as Record<string, unknown> | undefined,
  }));
  return { ok: res.status === 200, staleAfterMs: body.data?.staleAfterMs ?? 0, source: `${base}/readyz`, roles };
}

function age(ms: number | undefined): string {
  if (ms === undefined) return '-';
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 3_600_000)} h`;
}

/** The figures worth a glance, per role: queue depths, lag, seq. */
function summary(detail: Record<string, unknown> | undefined): string {
  if (!detail) return '';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(detail)) {
    if (v === null || typeof v === 'object') continue;
    parts.push(`${k}=${String(v)}`);
  }
  return parts.join(' ');
}

export function renderStatus(r: StatusReport): string {
  const rows = r.roles.map((l) => ({
    role: l.role,
    state: l.state,
    'last progress': l.progressAt === undefined ? '-' : new Date(l.progressAt).toISOString(),
    age: age(l.ageMs),
    lease: l.lease ?? '-',
    holder: l.holder ?? '-',
    figures: summary(l.detail),
  }));
  const bad = r.roles.filter((l) => l.state !== 'fresh').map((l) => l.role);
  const verdict = bad.length === 0
    ? `all ${r.roles.length} roles fresh (stale after ${r.staleAfterMs / 1000} s)`
    : `${bad.length} of ${r.roles.length} roles not fresh: ${bad.join(', ')} (stale after ${r.staleAfterMs / 1000} s)`;
  const stopped = r.roles.length > 0 && r.roles.every((l) => l.lease === 'released');
  return `${table(rows)}\n\n${verdict}; from ${r.source}${stopped ? '\nthe stack is stopped: every role released its lease (start it with npm start)' : ''}`;
}

export function statusCommand(): Command {
  return new Command('status')
    .description('the roles of the running stack: state, last progress, age and lease holder')
    .option('--url <url>', "an API's base URL: read its /readyz instead of the stack's database")
    .option('--json', 'machine-readable output')
    .action(async (o: { url?: string; json?: boolean }) => {
      let report: StatusReport;
      try {
        report = o.url ? await statusFromUrl(o.url) : await statusFromStorage(loadConfig());
      } catch (err) {
        if (!(err instanceof NoStackError)) throw err;
        if (o.json) process.stdout.write(`${JSON.stringify({ ok: false, error: err.message }, null, 2)}\n`);
        process.stderr.write(`error: ${err.message}\n`);
        process.exitCode = 2;
        return;
      }
      process.stdout.write(`${o.json ? JSON.stringify(report, null, 2) : renderStatus(report)}\n`);
      process.exitCode = report.ok ? 0 : 1;
    });
}
