/**
 * Readiness (docs/operations.md): an API is ready when every role it depends on has made progress
 * within the threshold. The roles' progress comes from the `role_status` table, which the process
 * running each role publishes (status-publisher.ts), so an API anywhere reads the same answer.
 * Kubernetes' convention: `/healthz` says the process answers, `/readyz` whether it should be sent
 * traffic; 503 names each stale role and its age.
 */
import type { DbExecutor } from '../storage/database.ts';
import { listRoleStatus, type RoleStatusRow } from '../storage/role-status-store.ts';
import { STATUS_ROLES, type StatusRole } from './role-status.ts';
import { chainClockOf, judgeChainClock, type ClockCheck } from './chain-clock-policy.ts';

/** The roles each API's answers depend on. */
export const API_DEPENDENCIES: Readonly<Record<'stock' | 'perp', readonly StatusRole[]>> = {
  // Quotes for prices and fills, the indexer for balances and orders, the executor to fill, the relayer for One Click.
  stock: ['marketdata', 'indexer', 'executor', 'relayer'],
  // Index prices, the engine and its history, the vault's deposits.
  perp: ['marketdata', 'perp-engine', 'projector', 'perp-indexer'],
};

export const DEFAULT_READINESS_STALE_MS = 15_000;

/**
 * `blocked`: the role makes progress, but a check of the venue fails for everything it would do
 * (the chain's clock beyond what the oracle's age allows: docs/operations.md, "The chain's clock").
 * Not ready, like stale, and named with its reason.
 */
export type RoleHealth = 'fresh' | 'stale' | 'missing' | 'blocked';

/** What blocks a role: the time check that fails, both clocks at the reading and the bound. */
export interface RoleBlock {
  check: ClockCheck;
  /** The chain's time and the wall clock's, ms. */
  chainTime: number;
  wallTime: number;
  /** Chain minus wall, ms (negative: behind). */
  skewMs: number;
  /** The largest skew the check allows, seconds. */
  limitS: number;
}

export interface RoleReadiness {
  role: StatusRole;
  state: RoleHealth;
  /** Ms since the role's last progress (or since it published without any); absent when missing. */
  ageMs?: number;
  leaseState?: string;
  /** The role's own figures (a copy of what it published): seq, head and indexed block, queue depth… */
  detail?: Record<string, unknown>;
  /** Why a `blocked` role cannot do its work: a sentence with both times and the bound. */
  reason?: string;
  clock?: RoleBlock;
}

export interface ReadinessReport {
  ready: boolean;
  staleMs: number;
  checkedAt: number;
  roles: RoleReadiness[];
  /** `marketdata stale for 42 s, executor missing`: empty when ready. */
  summary: string;
  /**
   * With several chains (docs/operations.md, "Readiness"): each other chain's own report. The API
   * stays ready while only such a chain is not (its venue alone halts), and says which.
   */
  chains?: Array<{ chainId: number; ready: boolean; summary: string; roles: RoleReadiness[] }>;
}

/** Judges `rows` for `roles` at `now`. Pure: the API, `tokex status` and the tests share it. */
export function judgeReadiness(rows: readonly RoleStatusRow[], roles: readonly StatusRole[], now: number, staleMs: number): ReadinessReport {
  const byRole = new Map(rows.map((r) => [r.role, r]));
  const out: RoleReadiness[] = roles.map((role) => {
    const row = byRole.get(role);
    if (!row) return { role, state: 'missing' };
    // A role with no progress yet is as old as its first publication; progress is never later than the publication.
    const since = row.progressAt ?? row.publishedAt;
    const ageMs = Math.max(0, now - since);
    const state: RoleHealth = ageMs > staleMs || row.leaseState !== 'held' ? 'stale' : 'fresh';
    if (state === 'fresh') {
      // A fresh role whose chain clock fails a venue check: its progress fills nothing. A reading as
      // old as the stale threshold is not judged (the role that took it is stale by then anyway).
      const clock = chainClockOf(row.detail);
      const refusal = clock !== undefined && now - clock.readAt <= staleMs ? judgeChainClock(clock) : undefined;
      if (refusal) {
        const { reason, ...block } = refusal;
        return { role, state: 'blocked', ageMs, leaseState: row.leaseState, detail: row.detail, reason, clock: block };
      }
    }
    return { role, state, ageMs, leaseState: row.leaseState, detail: row.detail };
  });
  const bad = out.filter((r) => r.state !== 'fresh');
  const summary = bad
    .map((r) =>
      r.state === 'missing'
        ? `${r.role} has never reported`
        : r.state === 'blocked'
          ? `${r.role} blocked: ${r.reason}`
          : r.leaseState !== 'held'
            ? `${r.role} stale for ${Math.round((r.ageMs ?? 0) / 1000)} s (lease ${r.leaseState})`
            : `${r.role} stale for ${Math.round((r.ageMs ?? 0) / 1000)} s`,
    )
    .join(', ');
  return { ready: bad.length === 0, staleMs, checkedAt: now, roles: out, summary };
}

export interface ReadinessProbe {
  /** The report now; the table is read at most once per `cacheMs`, so a hammered probe costs one query a second. */
  check(): Promise<ReadinessReport>;
  /** How many times the table was read (the cache's effect, for tests and metrics). */
  readonly tableReads: number;
}

export function createReadinessProbe(opts: { db: DbExecutor; roles: readonly StatusRole[]; staleMs: number; cacheMs?: number; now?: () => number }): ReadinessProbe {
  const now = opts.now ?? Date.now;
  const cacheMs = opts.cacheMs ?? 1_000;
  let cached: { at: number; rows: RoleStatusRow[] } | undefined;
  let reading: Promise<RoleStatusRow[]> | undefined;
  let tableReads = 0;
  const rows = async (): Promise<RoleStatusRow[]> => {
    const t = now();
    if (cached && t - cached.at < cacheMs) return cached.rows;
    if (!reading) tableReads += 1;
    reading ??= listRoleStatus(opts.db)
      .then((r) => {
        cached = { at: now(), rows: r };
        return r;
      })
      .finally(() => (reading = undefined));
    return reading;
  };
  return {
    async check() {
      return judgeReadiness(await rows(), opts.roles, now(), opts.staleMs);
    },
    get tableReads() {
      return tableReads;
    },
  };
}

/**
 * The readiness of an API serving several chains: `first` judges the process (the first chain holds
 * the shared roles: market data, and the keys' database); each other chain is judged on its own
 * database and reported under `chains`, its summary prefixed with `chain <id>:` and appended to the
 * first's. A chain not ready does not make the API unready: the other chains go on trading, and a
 * request to it is answered by its venue as its state allows.
 */
export function createChainsReadinessProbe(first: ReadinessProbe, others: ReadonlyArray<{ chainId: number; probe: ReadinessProbe }>): ReadinessProbe {
  return {
    async check() {
      const [report, ...rest] = await Promise.all([
        first.check(),
        ...others.map(async ({ chainId, probe }) => {
          try {
            const r = await probe.check();
            return { chainId, ready: r.ready, summary: r.summary, roles: r.roles };
          } catch {
            return { chainId, ready: false, summary: 'storage unavailable', roles: [] as RoleReadiness[] };
          }
        }),
      ]);
      const notReady = rest.filter((c) => !c.ready).map((c) => `chain ${c.chainId} not ready: ${c.summary}`);
      return { ...report, summary: [report.summary, ...notReady].filter((x) => x !== '').join('; '), chains: rest };
    },
    get tableReads() {
      return first.tableReads + others.reduce((n, o) => n + o.probe.tableReads, 0);
    },
  };
}

export function isStatusRole(s: string): s is StatusRole {
  return (STATUS_ROLES as readonly string[]).includes(s);
}
