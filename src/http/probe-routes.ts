/**
 * `GET /healthz` and `GET /readyz` (contract.md §0 "operations", docs/operations.md): liveness
 * answers 200 whenever the process answers, with the release it runs; readiness 200 while every
 * role the API depends on has made progress within the threshold (and none is blocked by the chain's
 * clock), else 503 naming each stale role and its age, or the blocked role and why. Both without authentication, rate limit or secrets: a role's figures are counts,
 * sequence numbers and block numbers, never keys, addresses or holder ids. Each API renders them in
 * its own envelope.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { APP_VERSION } from '../config/build-info.ts';
import type { ReadinessProbe, ReadinessReport } from '../observability/readiness.ts';

export interface ProbeEnvelope {
  /** The body of a 200 answer carrying `data`. */
  ok(requestId: string, data: unknown): unknown;
  /** The body of the 503 answer: `message` names the stale roles. */
  notReady(requestId: string, message: string, data: unknown): unknown;
}

/** The liveness answer: the process answers, and which release it is (docs/upgrades.md). */
const HEALTHY = Object.freeze({ status: 'ok', version: APP_VERSION });

/** What the probes show of a report: no holder ids (host and pid), only the roles' own figures. */
export function publicReport(r: ReadinessReport): Record<string, unknown> {
  return {
    status: r.ready ? 'ready' : 'not_ready',
    staleAfterMs: r.staleMs,
    checkedAt: r.checkedAt,
    roles: r.roles.map((role) => ({
      role: role.role,
      state: role.state,
      ...(role.ageMs === undefined ? {} : { ageMs: role.ageMs }),
      ...(role.leaseState === undefined ? {} : { lease: role.leaseState }),
      ...(role.detail === undefined ? {} : { detail: role.detail }),
      // A blocked role: the check that fails, both clocks and the bound (numbers and a sentence, no secrets).
      ...(role.reason === undefined ? {} : { reason: role.reason }),
      ...(role.clock === undefined ? {} : { clock: role.clock }),
    })),
    // Several chains: each other chain's state, and what stops it, by name (docs/operations.md).
    ...(r.chains === undefined
      ? {}
      : {
          summary: r.summary,
          chains: r.chains.map((c) => ({
            chainId: c.chainId,
            status: c.ready ? 'ready' : 'not_ready',
            ...(c.ready ? {} : { summary: c.summary }),
            roles: c.roles.map((role) => ({
              role: role.role,
              state: role.state,
              ...(role.ageMs === undefined ? {} : { ageMs: role.ageMs }),
              ...(role.leaseState === undefined ? {} : { lease: role.leaseState }),
              ...(role.reason === undefined ? {} : { reason: role.reason }),
            })),
          })),
        }),
  };
}

export function registerProbes(app: FastifyInstance, opts: { prefixes: readonly string[]; envelope: ProbeEnvelope; readiness?: ReadinessProbe }): void {
  const { envelope, readiness } = opts;
  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');
  for (const prefix of opts.prefixes) {
    app.get(`${prefix}/healthz`, { schema: { hide: true } }, async (req, reply) => {
      noStore(reply);
      return envelope.ok(req.id, HEALTHY);
    });
    app.get(`${prefix}/readyz`, { schema: { hide: true } }, async (req, reply) => {
      noStore(reply);
      // A process started without the probe (a test of one route group) is ready by definition.
      if (!readiness) return envelope.ok(req.id, { status: 'ready', roles: [] });
      let report: ReadinessReport;
      try {
        report = await readiness.check();
      } catch {
        // The table could not be read: the database is away, so this API is not ready either.
        reply.code(503);
        return envelope.notReady(req.id, 'not ready: storage unavailable', { status: 'not_ready', roles: [] });
      }
      if (report.ready) return envelope.ok(req.id, publicReport(report));
      reply.code(503);
      return envelope.notReady(req.id, `not ready: ${report.summary}`, publicReport(report));
    });
  }
}
