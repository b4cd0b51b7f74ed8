/**
 * The console's operator page (docs/console.md, "Operator page"): `GET /console/ops` (the page),
 * `GET /console/ops/state` (what it shows) and two actions, `POST /console/ops/corporate-actions/{id}/retry[?chainId=]`
 * and `POST /console/ops/keys/{apiKey}/revoke`. Everything here reads and writes the stack's own
 * stores in process, as `tokex status`, `tokex keys` and `tokex corporate-actions` do from a shell on
 * the host; so it answers only to a caller on the host itself (ops-access.ts). No secret leaves:
 * keys are listed without their secrets, the metrics' figures carry no label but the series'.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppConfig } from '../config/app-config.ts';
import type { ApiKeyService } from '../auth/api-key-service.ts';
import { NotFoundError, ValidationError } from '../errors/app-error.ts';
import type { QuoteReader } from '../marketdata/market-types.ts';
import { API_DEPENDENCIES, judgeReadiness } from '../observability/readiness.ts';
import { LEASE_OF, STATUS_ROLES } from '../observability/role-status.ts';
import { metricsActive, metricsRegistry } from '../observability/metrics-registry.ts';
import { latestReserveEpoch } from '../perp/store/reserves-store.ts';
import type { Db } from '../storage/database.ts';
import { readLease } from '../storage/lease-store.ts';
import { listRoleStatus } from '../storage/role-status-store.ts';
import { actionIdOf, listCorporateActions, rescheduleFailedAction } from '../stock/corporate-actions/corporate-action-store.ts';
import type { CorporateActionRegistry } from '../stock/corporate-actions/corporate-action-registry.ts';
import { stockOk } from '../stock/stock-envelope.ts';
import { opsRefusal } from './ops-access.ts';

/** What the operator page needs of the stack (the stock API role's context fits it). */
export interface OpsContext {
  config: Pick<AppConfig, 'readinessStaleMs' | 'chainId'> & { executor?: Pick<AppConfig['executor'], 'quoteMaxAgeMs'> };
  db: Db;
  keys: ApiKeyService;
  symbols: ReadonlyArray<{ symbol: string }>;
  quotes(): Promise<QuoteReader>;
}

/** A metric's samples, summed over its labels, or per one label. */
type MetricJson = { name: string; values: Array<{ value: number; labels: Record<string, string | number> }> };

/** The figures worth a glance on one screen (docs/operations.md names every series). */
export function headlineFigures(metrics: readonly MetricJson[]): Array<{ name: string; label: string; value: string }> {
  const by = new Map(metrics.map((m) => [m.name, m]));
  const sum = (name: string, keep: (labels: Record<string, string | number>) => boolean = () => true) => {
    const m = by.get(name);
    if (!m) return undefined;
    return m.values.filter((v) => keep(v.labels)).reduce((n, v) => n + v.value, 0);
  };
  const out: Array<{ name: string; label: string; value: string }> = [];
  const add = (name: string, label: string, v: number | undefined, fmt: (n: number) => string = (n) => String(Math.round(n))) => {
    if (v !== undefined && Number.isFinite(v)) out.push({ name, label, value: fmt(v) });
  };
  add('tokex_http_requests_total', 'requests answered', sum('tokex_http_requests_total'));
  add('tokex_http_requests_total{status=~"5.."}', 'requests answered with a 5xx', sum('tokex_http_requests_total', (l) => String(l.status).startsWith('5')));
  add('tokex_auth_refusals_total', 'refused by authentication', sum('tokex_auth_refusals_total'));
  add('tokex_rate_limit_refusals_total', 'refused by the rate limit (429)', sum('tokex_rate_limit_refusals_total'));
  add('tokex_stream_connections', 'open stream connections', sum('tokex_stream_connections'));
  add('tokex_queue_depth{role="executor"}', 'executor queue', sum('tokex_queue_depth', (l) => l.role === 'executor'));
  add('tokex_queue_depth{role="relayer"}', 'One Click relayer queue', sum('tokex_queue_depth', (l) => l.role === 'relayer'));
  add('tokex_indexer_lag_blocks', 'indexers\' lag (blocks)', sum('tokex_indexer_lag_blocks'));
  add('tokex_perp_engine_last_seq', 'perp engine sequence', sum('tokex_perp_engine_last_seq'));
  add('tokex_perp_open_interest_usd', 'perp open interest (USD)', sum('tokex_perp_open_interest_usd'), (n) => n.toFixed(2));
  add('tokex_perp_insurance_fund_usd', 'insurance fund (USD)', sum('tokex_perp_insurance_fund_usd'), (n) => n.toFixed(2));
  const lag = by.get('nodejs_eventloop_lag_p99_seconds')?.values[0]?.value;
  add('nodejs_eventloop_lag_p99_seconds', 'event-loop lag p99 (ms)', lag === undefined ? undefined : lag * 1000, (n) => n.toFixed(1));
  return out;
}

/** Micro-units (the collateral's 6 decimals) as a decimal string, exact. */
function micro(v: bigint | null): string | null {
  if (v === null) return null;
  const neg = v < 0n;
  const a = neg ? -v : v;
  const s = `${a / 1_000_000n}.${String(a % 1_000_000n).padStart(6, '0')}`;
  return neg ? `-${s}` : s;
}

/** One chain's corporate actions as the operator page reads them: its registry and its store. */
export interface OpsChainActions {
  chainId: number;
  db: Db;
  corporateActions: CorporateActionRegistry;
}

/**
 * Every chain's corporate actions, one row per action and chain (docs/corporate-actions.md, "Several
 * chains": each chain applies an action with a state of its own), newest ex-date first, then by
 * symbol and chain in the deployment's order.
 */
async function corporateActionRows(chains: readonly OpsChainActions[]) {
  const perChain = await Promise.all(
    chains.map(async (c, order) => {
      const listed = await c.corporateActions.list().catch(() => []);
      const records = new Map((await listCorporateActions(c.db).catch(() => [])).map((r) => [r.actionId, r]));
      return listed.map((a) => {
        const id = actionIdOf(a.symbol, a.exDate);
        const rec = records.get(id);
        return {
          order,
          actionId: id,
          chainId: c.chainId,
          symbol: a.symbol,
          type: a.type,
          exDate: a.exDate,
          value: a.type === 'SPLIT' ? (a.ratio ?? '') : `${a.amount ?? ''} ${a.currency ?? ''}`.trim(),
          status: a.status ?? rec?.status ?? null,
          reason: a.reason ?? null,
          txHash: a.txHash ?? null,
          retryable: rec?.status === 'failed',
        };
      });
    }),
  );
  return perChain
    .flat()
    .sort((x, y) => (x.exDate !== y.exDate ? (x.exDate < y.exDate ? 1 : -1) : x.symbol !== y.symbol ? (x.symbol < y.symbol ? -1 : 1) : x.order - y.order))
    .map(({ order: _order, ...row }) => row);
}

/** A stock key's scopes as `tokex keys` writes them (`31337:Anchored:READ_ONLY`); a perp key's permissions (`READ+TRADE`). */
function scopeWords(k: { scopes?: ReadonlyArray<{ chainId: number; productType: string; access: string }>; permissions: readonly string[] }): string[] {
  if (k.scopes !== undefined && k.scopes.length > 0) return k.scopes.map((s) => `${s.chainId}:${s.productType}:${s.access}`);
  return [k.permissions.join('+')];
}

export async function opsState(ctx: OpsContext, chains: readonly OpsChainActions[], now = Date.now()) {
  const rows = await listRoleStatus(ctx.db).catch(() => []);
  const report = judgeReadiness(rows, STATUS_ROLES, now, ctx.config.readinessStaleMs);
  const roles = await Promise.all(
    report.roles.map(async (r) => {
      const lease = await readLease(ctx.db, `role:${LEASE_OF[r.role]}`).catch(() => undefined);
      return { role: r.role, state: r.state, ageMs: r.ageMs ?? null, lease: r.leaseState ?? null, holder: lease ? lease.holder || '(released)' : null, detail: r.detail ?? {} };
    }),
  );
  const stateOf = new Map(report.roles.map((r) => [r.role, r.state]));
  const apis = (['stock', 'perp'] as const).map((api) => {
    const bad = API_DEPENDENCIES[api].filter((r) => stateOf.get(r) !== 'fresh');
    return { api, ready: bad.length === 0, waitingFor: bad };
  });

  // Halts: the quote guard's verdicts the marketdata role publishes (live sources), and any symbol
  // whose quote stands still past the quote age the executor accepts (every source, the simulator too).
  const md = report.roles.find((r) => r.role === 'marketdata')?.detail ?? {};
  const guardHalted = new Map<string, string>();
  const halted = typeof md.quotesHalted === 'string' ? md.quotesHalted.split(',').filter(Boolean) : [];
  const reasons = typeof md.haltReasons === 'string' ? md.haltReasons.split(' | ') : [];
  for (const h of halted) {
    const symbol = h.split('=')[0];
    const why = reasons.find((r) => r.startsWith(`${symbol}: `))?.slice(symbol.length + 2) ?? h.split('=')[1];
    guardHalted.set(symbol, why);
  }
  const maxAge = ctx.config.executor?.quoteMaxAgeMs ?? 30_000;
  const reader = await ctx.quotes().catch(() => undefined);
  const symbols = ctx.symbols.map(({ symbol }) => {
    const q = reader?.getQuote(symbol);
    const age = q ? Math.max(0, now - q.timestamp) : null;
    let reason: string | null = guardHalted.get(symbol) ?? null;
    if (!reason && q === undefined) reason = 'no quote yet';
    else if (!reason && age !== null && age > maxAge) reason = `no new quote for ${Math.round(age / 1000)} s (limit ${Math.round(maxAge / 1000)} s): market orders are refused and the executor fills nothing`;
    return { symbol, halted: reason !== null, reason, last: q?.last ?? null, quoteAt: q?.timestamp ?? null };
  });

  const corporateActions = await corporateActionRows(chains);

  const keys = (await ctx.keys.list()).map((k) => ({
    apiKey: k.apiKey,
    api: k.api,
    permissions: k.permissions,
    // A stock key's rights ({chainId, productType, access} each); `permissions` is its first scope's access.
    scopes: k.scopes,
    // What the page shows: every scope, not the first one's access only.
    scopeWords: scopeWords(k),
    label: k.label,
    userAddress: k.userAddress,
    ipWhitelist: k.ipWhitelist,
    active: k.active,
    expiresAt: k.expiresAt,
    createdAt: k.createdAt,
  }));

  const epoch = await latestReserveEpoch(ctx.db).catch(() => undefined);
  const reserves = epoch
    ? {
        epoch: epoch.epoch,
        status: epoch.status,
        root: epoch.root,
        total: micro(epoch.total),
        leafCount: epoch.leafCount,
        badDebt: micro(epoch.badDebt),
        vaultBalance: micro(epoch.vaultBalance),
        solvent: epoch.solvent,
        txHash: epoch.txHash,
        registry: epoch.registry,
        snapshotTs: epoch.snapshotTs,
      }
    : null;

  const metrics = metricsActive() ? headlineFigures((await metricsRegistry.getMetricsAsJSON()) as unknown as MetricJson[]) : [];
  return { checkedAt: now, staleAfterMs: report.staleMs, ready: report.ready, summary: report.summary, apis, roles, symbols, corporateActions, keys, reserves, metrics };
}

export interface OpsRoutesOptions {
  ctx: OpsContext;
  /** Each chain's corporate actions, the first chain's first (none: the table is empty). */
  chains?: readonly OpsChainActions[];
  /** The page's HTML, served at `/console/ops` with the console's CSP. */
  page(req: FastifyRequest, reply: FastifyReply): Promise<unknown>;
}

/** Registers the operator page's routes (behind opsRefusal: the host's own loopback only). */
export async function opsRoutes(app: FastifyInstance, opts: OpsRoutesOptions): Promise<void> {
  const hidden = { schema: { hide: true } };
  const { ctx } = opts;
  const guard = (write: boolean) => async (req: FastifyRequest) => {
    const refusal = opsRefusal({ peerAddress: req.socket.remoteAddress, host: req.headers.host, origin: req.headers.origin, opsHeader: req.headers['x-tokex-ops'], write });
    // The same 404 as an unknown route: a caller from elsewhere learns nothing.
    if (refusal) throw new NotFoundError('route');
  };
  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');
  app.get('/console/ops', { ...hidden, onRequest: guard(false) }, opts.page);
  app.get('/console/ops/state', { ...hidden, onRequest: guard(false) }, async (req, reply) => noStore(reply).send(stockOk(req.id, await opsState(ctx, opts.chains ?? []))));
  // `?chainId=` retries the action on that chain; without it, on every chain where it failed.
  app.post<{ Params: { actionId: string }; Querystring: { chainId?: string } }>('/console/ops/corporate-actions/:actionId/retry', { ...hidden, onRequest: guard(true) }, async (req, reply) => {
    const { actionId } = req.params;
    const chains = opts.chains ?? [];
    const asked = req.query.chainId;
    let targets = chains;
    if (asked !== undefined) {
      targets = chains.filter((c) => String(c.chainId) === asked);
      if (targets.length === 0) throw new ValidationError('chainId', `${asked} is not a chain this deployment serves`);
    }
    const retried: number[] = [];
    for (const c of targets) if (await rescheduleFailedAction(c.db, actionId, Date.now())) retried.push(c.chainId);
    if (retried.length === 0) throw new ValidationError('actionId', `${actionId} is not a failed corporate action${asked === undefined ? '' : ` on chain ${asked}`}`);
    return noStore(reply).send(stockOk(req.id, { actionId, status: 'scheduled', chainIds: retried }));
  });
  app.post<{ Params: { apiKey: string } }>('/console/ops/keys/:apiKey/revoke', { ...hidden, onRequest: guard(true) }, async (req, reply) => {
    const { apiKey } = req.params;
    await ctx.keys.revoke(apiKey);
    return noStore(reply).send(stockOk(req.id, { apiKey, active: false }));
  });
}
