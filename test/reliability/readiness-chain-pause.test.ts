/**
 * Readiness follows the chain (docs/operations.md): anvil paused with SIGSTOP (it accepts
 * connections and never answers, the worst kind of outage) turns both APIs' `/readyz` to 503 naming
 * the roles that need the chain, and SIGCONT turns it back to 200. Meanwhile nothing else fails:
 * `/healthz`, prices and cached reads answer 200, and a read that needs the chain answers the
 * documented chain-unavailable 503, never another 5xx.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AnvilHandle } from '../../src/chain/anvil-process.ts';
import { startStackOnOwnAnvil, type TestStack } from '../support/stock-stack.ts';

const STALE_MS = 3_000;
let anvil: AnvilHandle;
let t: TestStack;
let paused = false;

interface Probe {
  status: number;
  body: { code: number; errMsg?: string; msg?: string; data: { status: string; roles: Array<{ role: string; state: string; ageMs?: number }> } };
}

async function probe(base: string, path = '/readyz'): Promise<Probe> {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: (await res.json()) as Probe['body'] };
}

/** Polls `look` until `done` holds; fails with the last answer after `limitMs`. */
async function until<T>(what: string, look: () => Promise<T>, done: (v: T) => boolean, limitMs = 60_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const v = await look();
    if (done(v)) return v;
    if (Date.now() > deadline) {
      // What the roles logged meanwhile tells why (the stack's log is kept in memory).
      const roleLines = t.logs.filter((l) => /indexer|executor|"level":(40|50)/.test(l)).slice(-40).join('\n');
      throw new Error(`${what}: not within ${limitMs} ms; last ${JSON.stringify(v)}\n${roleLines}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

const stale = (p: Probe) => p.body.data.roles.filter((r) => r.state !== 'fresh').map((r) => r.role).sort();

beforeAll(async () => {
  ({ anvil, t } = await startStackOnOwnAnvil({ READINESS_STALE_MS: String(STALE_MS), STATUS_PUBLISH_MS: '250' }));
});

afterAll(async () => {
  if (paused) process.kill(anvil.pid, 'SIGCONT');
  await t?.stop();
  await anvil?.stop();
});

it('a paused chain turns /readyz 503 naming the chain roles, and 200 again once it answers; nothing else fails', async () => {
  const stockBase = new URL(t.stack.stockBaseUrl!).origin;
  const perpBase = t.perpBaseUrl!;
  await until('stock ready', () => probe(stockBase), (p) => p.status === 200);
  const ready = await until('perp ready', () => probe(perpBase), (p) => p.status === 200);
  expect(ready.body).toMatchObject({ code: 0, msg: 'ok', data: { status: 'ready' } });
  expect(ready.body.data.roles.map((r) => r.role)).toEqual(['marketdata', 'perp-engine', 'projector', 'perp-indexer']);
  const user = t.demo.wallets[0].address;

  process.kill(anvil.pid, 'SIGSTOP');
  paused = true;
  const down = await until('stock not ready', () => probe(stockBase), (p) => p.status === 503 && stale(p).includes('executor') && stale(p).includes('indexer'));
  // The roles that need the chain, and only they: quotes keep flowing.
  expect(stale(down)).toEqual(['executor', 'indexer']);
  expect(down.body).toMatchObject({ code: 503, data: { status: 'not_ready' } });
  expect(down.body.errMsg).toMatch(/^not ready: (indexer|executor) stale for \d+ s, (indexer|executor) stale for \d+ s$/);
  const perpDown = await until('perp not ready', () => probe(perpBase), (p) => p.status === 503);
  expect(stale(perpDown)).toEqual(['perp-indexer']);
  expect(perpDown.body).toMatchObject({ code: 50003, data: { status: 'not_ready' } });
  expect(perpDown.body.msg).toMatch(/^not ready: perp-indexer stale for \d+ s$/);

  // Liveness, and what does not need the chain, are unaffected.
  expect((await probe(stockBase, '/healthz')).status).toBe(200);
  expect((await probe(perpBase, '/healthz')).status).toBe(200);
  expect((await t.readOnly.request('GET', '/api/v1/prices/AAPL')).code).toBe(200);
  expect((await t.readOnly.request('GET', '/api/v1/config')).code).toBe(200);
  // A read that needs the chain: the documented 503, nothing else.
  const balance = await t.readOnly.request('GET', `/api/v1/users/${user}/balance`);
  if (balance.code !== 200) expect(balance).toMatchObject({ httpStatus: 503, code: 503, errMsg: 'chain: RPC unavailable, try again later' });

  process.kill(anvil.pid, 'SIGCONT');
  paused = false;
  const back = await until('stock ready again', () => probe(stockBase), (p) => p.status === 200);
  expect(back.body).toMatchObject({ code: 200, errMsg: '', data: { status: 'ready' } });
  expect((await until('perp ready again', () => probe(perpBase), (p) => p.status === 200)).body.code).toBe(0);
  expect((await t.readOnly.request('GET', `/api/v1/users/${user}/balance`)).code).toBe(200);
}, 180_000);
