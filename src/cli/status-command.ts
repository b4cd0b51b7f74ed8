/**
 * `tokex status` (contract.md §0 "operations", docs/operations.md): every singleton role of the
 * running stack with its state, last progress, age and lease holder, read where the roles publish
 * it (the `role_status` and `leases` tables of DATA_DIR's SQLite file or DATABASE_URL), or, with
 * `--url`, from an API's `/readyz`. With several chains (docs/deployment.md, "Several chains") each
 * chain's roles, from its own namespace; `--chain <id>` one chain's only. Exit code 0 only when
 * every role is fresh; 1 when one is stale or missing; 2 when there is nothing to read (no stack at
 * that place, or a chain it does not serve).
 */
import fs from 'node:fs';
import { Command } from 'commander';
import { loadConfig, type AppConfig } from '../config/app-config.ts';
import { ValidationError } from '../errors/app-error.ts';
import { table } from './cli-output.ts';

/** One row of the status table (and of `--json`). */
export interface RoleStatusLine {
  role: string;
  /** `blocked`: it makes progress but cannot do its work (the executor under a chain clock the oracle refuses); `reason` says why. */
  state: 'fresh' | 'stale' | 'missing' | 'blocked';
  /** Wall-clock ms of the role's last progress. */
  progressAt?: number;
  ageMs?: number;
  lease?: string;
  holder?: string;
  detail?: Record<string, unknown>;
  /** Why a blocked role cannot work: both clocks and the bound. */
  reason?: string;
}

/** One chain's roles: the first chain's carry every singleton, the others' the per-chain ones. */
export interface ChainStatus {
  chainId: number;
  ok: boolean;
  source: string;
  roles: RoleStatusLine[];
}

export interface StatusReport {
  ok: boolean;
  staleAfterMs: number;
  /** The chain `roles` and `source` are of: the first chain's, or `--chain`'s. */
  chainId?: number;
  source: string;
  roles: RoleStatusLine[];
  /** With several chains and no `--chain`: each chain after the first; `ok` is every chain's. */
  chains?: ChainStatus[];
}

/** The roles each chain after the first runs of its own (the stack's PER_CHAIN_ROLES, as status roles). */
const OTHER_CHAIN_ROLES = ['indexer', 'executor', 'relayer'] as const;

/** Nothing to report on: exit code 2 and one line saying why. */
export class NoStackError extends Error {}

/**
 * Reads the tables of the stack configured by the environment (DATA_DIR or DATABASE_URL): every
 * chain it serves (EMBEDDED_CHAIN_IDS or STOCK_CHAINS), each in its own namespace, or `chainId`'s.
 */
export async function statusFromStorage(config: AppConfig, now = Date.now(), chainId?: number): Promise<StatusReport> {
  const { servedChainConfig } = await import('../app/chain-venues.ts');
  const wanted = chainId === undefined ? config.stockChains.map((c) => c.chainId) : [chainId];
  const reports: ChainStatus[] = [];
  for (const id of wanted) {
    let chainConfig: AppConfig;
    try {
      chainConfig = servedChainConfig(config, id);
    } catch (err) {
      throw new NoStackError((err as Error).message);
    }
    reports.push(await chainStatus(chainConfig, id === config.chainId, now));
  }
  const [first, ...others] = reports;
  return {
    ok: reports.every((r) => r.ok),
    staleAfterMs: config.readinessStaleMs,
    chainId: first.chainId,
    source: first.source,
    roles: first.roles,
    ...(others.length > 0 ? { chains: others } : {}),
  };
}

/** One chain's roles from its database (the first chain's: every singleton role; another's: its own). */
async function chainStatus(config: AppConfig, firstChain: boolean, now: number): Promise<ChainStatus> {
  const [{ openDatabase }, { sqlitePathOf }, { listRoleStatus }, { readLease }, { judgeReadiness }, { STATUS_ROLES, LEASE_OF }] = await Promise.all([
    import('../storage/database.ts'),
    import('../app/storage-wiring.ts'),
    import('../storage/role-status-store.ts'),
    import('../storage/lease-store.ts'),
    import('../observability/readiness.ts'),
    import('../observability/role-status.ts'),
  ]);
  const file = sqlitePathOf(config);
  const roles = firstChain ? STATUS_ROLES : OTHER_CHAIN_ROLES;
  if (!firstChain && !config.databaseUrl && !fs.existsSync(file)) {
    // A chain added to the list and not started yet: its roles have never reported.
    return { chainId: config.chainId, ok: false, source: file, roles: roles.map((role) => ({ role, state: 'missing' as const })) };
  }
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
    let rows: Awaited<ReturnType<typeof listRoleStatus>>;
    try {
      rows = await listRoleStatus(db);
    } catch {
      // Another chain's schema that a start has not made yet (PostgreSQL): its roles never reported.
      if (!firstChain) rows = [];
      else throw new NoStackError('the database has no role status yet: the stack there runs a version without it, or has never started');
    }
    const report = judgeReadiness(rows, roles, now, config.readinessStaleMs);
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
        ...(r.reason === undefined ? {} : { reason: r.reason }),
      });
    }
    return { chainId: config.chainId, ok: report.ready, source: config.databaseUrl ? (firstChain ? 'DATABASE_URL' : `DATABASE_URL, schema ${config.databaseSchema}`) : file, roles: lines };
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
  let body: { data?: { staleAfterMs?: number; roles?: Array<Record<string, unknown>>; chains?: Array<{ chainId: number; status: string; roles?: Array<Record<string, unknown>> }> } };
  try {
    body = (await res.json()) as typeof body;
  } catch {
    throw new NoStackError(`${base}/readyz answered HTTP ${res.status} without a JSON body: not a tokex API`);
  }
  const lines = (list: Array<Record<string, unknown>> | undefined): RoleStatusLine[] =>
    (list ?? []).map((r) => ({
      role: String(r.role),
      state: r.state as RoleStatusLine['state'],
      ageMs: typeof r.ageMs === 'number' ? r.ageMs : undefined,
      progressAt: typeof r.ageMs === 'number' ? Date.now() - r.ageMs : undefined,
      lease: typeof r.lease === 'string' ? r.lease : undefined,
      detail: r.detail as Record<string, unknown> | undefined,
      ...(typeof r.reason === 'string' ? { reason: r.reason } : {}),
    }));
  const source = `${base}/readyz`;
  // Several chains: /readyz answers 200 while only another chain is not ready; status says so too.
  const chains = body.data?.chains?.map((c) => ({ chainId: c.chainId, ok: c.status === 'ready', source, roles: lines(c.roles) }));
  return {
    ok: res.status === 200 && (chains ?? []).every((c) => c.ok),
    staleAfterMs: body.data?.staleAfterMs ?? 0,
    source,
    roles: lines(body.data?.roles),
    ...(chains && chains.length > 0 ? { chains } : {}),
  };
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

/**
 * The report as a person reads it: one chain as before; with several, a section per chain (its
 * table and verdict) under a `chain <id>` line.
 */
export function renderStatus(r: StatusReport): string {
  if (!r.chains) return renderChain(r.roles, r.staleAfterMs, r.source);
  const sections = [{ chainId: r.chainId, roles: r.roles, source: r.source }, ...r.chains].map(
    (c, i) => `chain ${c.chainId ?? '(first)'}${i === 0 ? ' (the first chain: every role)' : ' (its own indexer, executor and relayer)'}\n${renderChain(c.roles, r.staleAfterMs, c.source)}`,
  );
  return sections.join('\n\n');
}

function renderChain(roles: RoleStatusLine[], staleAfterMs: number, source: string): string {
  const r = { roles, staleAfterMs, source };
  const rows = r.roles.map((l) => ({
    role: l.role,
    state: l.state,
    'last progress': l.progressAt === undefined ? '-' : new Date(l.progressAt).toISOString(),
    age: age(l.ageMs),
    lease: l.lease ?? '-',
    holder: l.holder ?? '-',
    figures: summary(l.detail),
  }));
  const bad = r.roles.filter((l) => l.state !== 'fresh').map((l) => (l.state === 'blocked' ? `${l.role} blocked` : l.role));
  const verdict = bad.length === 0
    ? `all ${r.roles.length} roles fresh (stale after ${r.staleAfterMs / 1000} s)`
    : `${bad.length} of ${r.roles.length} roles not fresh: ${bad.join(', ')} (stale after ${r.staleAfterMs / 1000} s)`;
  const stopped = r.roles.length > 0 && r.roles.every((l) => l.lease === 'released');
  // A blocked role ticks on, so its age looks fine: the line says what its venue cannot do, and why.
  const blocked = r.roles.filter((l) => l.state === 'blocked').map((l) => `\n${l.role === 'executor' ? 'the stock venue cannot fill' : `${l.role} cannot work`}: ${l.reason ?? 'blocked'}`);
  return `${table(rows)}\n\n${verdict}; from ${r.source}${blocked.join('')}${stopped ? '\nthe stack is stopped: every role released its lease (start it with npm start)' : ''}`;
}

export function statusCommand(): Command {
  return new Command('status')
    .description('the roles of the running stack: state, last progress, age and lease holder')
    .option('--url <url>', "an API's base URL: read its /readyz instead of the stack's database")
    .option('--chain <id>', "one chain's roles only (default: every chain the configuration serves)")
    .option('--json', 'machine-readable output')
    .action(async (o: { url?: string; json?: boolean; chain?: string }) => {
      let report: StatusReport;
      try {
        let chainId: number | undefined;
        if (o.chain !== undefined) {
          const { parseChainIds } = await import('../app/chain-venues.ts');
          const ids = parseChainIds(o.chain);
          if (ids.length !== 1) throw new ValidationError('--chain', 'one chain id');
          // /readyz does not name the first chain: it lists every chain, and --json shows them.
          if (o.url) throw new ValidationError('--chain', 'not with --url: the API\'s /readyz lists every chain it serves');
          chainId = ids[0];
        }
        report = o.url ? await statusFromUrl(o.url) : await statusFromStorage(loadConfig(), Date.now(), chainId);
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
