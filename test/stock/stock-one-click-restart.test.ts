/**
 * The relayer killed in the middle of 20 concurrent One Click sends (issue 13): the stock API,
 * indexer and executor run in this process; the relayer runs as its own process
 * (`tokex start --role relayer`), is killed with SIGKILL while its transactions wait in anvil's
 * pool (mining paused), and a new relayer process takes over. Every send lands exactly once, with
 * consecutive relayer nonces, and every HTTP call gets its answer. On SQLite and, with
 * DATABASE_URL, PostgreSQL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANVIL_ACCOUNTS } from '../../src/chain/anvil-accounts.ts';
import { until } from '../support/poll.ts';
import { chainClients, oneClickUsers, RELAYER, relayerNonces, type OneClickUser } from '../support/one-click-users.ts';
import { stackEngines } from '../support/stack-engines.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const IN_FLIGHT = 8;

describe.each(stackEngines('ocr'))('One Click relayer restart ($name)', (engine) => {
  let t: TestStack;
  let env: Record<string, string>;
  let users: OneClickUser[];
  const children = new Set<ChildProcess>();

  /** A relayer process on the test stack's chain, data directory and database; resolves once it runs. */
  function startRelayer(): Promise<ChildProcess> {
    // The engine's storage only: a DATABASE_URL of the test run must not reach a SQLite suite's relayer.
    const { DATABASE_URL: _url, DATABASE_SCHEMA: _schema, REDIS_URL: _redis, ...inherited } = process.env;
    const child = spawn(process.execPath, ['bin/tokex.mjs', 'start', '--role', 'relayer'], {
      cwd: ROOT,
      env: {
        ...inherited,
        ...env,
        DATA_DIR: t.dataDir,
        RPC_URL: t.demo.rpcUrl,
        RELAYER_PRIVATE_KEY: ANVIL_ACCOUNTS[7].privateKey,
        RELAY_MAX_IN_FLIGHT: String(IN_FLIGHT),
        RELAY_POLL_MS: '25',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    child.once('exit', () => children.delete(child));
    return new Promise((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += String(d);
        if (out.includes('One Click relayer started')) resolve(child);
      });
      child.stderr!.on('data', (d) => (out += String(d)));
      child.once('exit', (code) => reject(new Error(`relayer exited with ${code}: ${out.slice(-2000)}`)));
    });
  }

  const statuses = async () => {
    const rows = await t.stack.db.kysely.selectFrom('stock_relay_requests').select(['status', 'kind']).where('kind', '=', 'cash-deposit').execute();
    return rows.map((r) => r.status);
  };

  beforeAll(async () => {
    env = engine.env();
    t = await startTestStack({ ...env, INDEXER_POLL_MS: '100', RELAY_POLL_MS: '25' }, { role: ['marketdata', 'indexer', 'executor', 'stock-api'] });
    users = await oneClickUsers(t, `ocr-${engine.name}`, 20, '100');
  }, 120_000);
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await t?.stop();
    await engine.cleanup?.(env);
  });

  it('20 concurrent sends survive a kill -9 of the relayer: each lands once, nonces consecutive', async () => {
    const { pub } = chainClients(t);
    const first = await startRelayer();
    for (const u of users) await u.client.enableOneClick(u.account);
    const nonce0 = await pub.getTransactionCount({ address: RELAYER });

    await pub.request({ method: 'evm_setAutomine' as never, params: [false] as never });
    const calls = users.map((u) => u.client.post<any>('/api/v1/cash/deposits/send', { tokenAddress: t.demo.stock.contracts.cashToken, tokenAmount: '25' }));
    // The first relayer signs and broadcasts as many as it may follow at once; none can be mined.
    await until(statuses, (s) => s.length === 20 && s.filter((x) => x === 'sent').length === IN_FLIGHT, 30_000);
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    expect((await statuses()).filter((x) => x === 'queued')).toHaveLength(20 - IN_FLIGHT);

    await startRelayer();
    await pub.request({ method: 'evm_setAutomine' as never, params: [true] as never });
    await pub.request({ method: 'evm_mine' as never, params: [] as never });
    const outs = await Promise.all(calls);

    expect(outs.map((o) => o.status)).toEqual(users.map(() => 'mined'));
    expect(await relayerNonces(t, outs.map((o) => o.txHash))).toEqual(Array.from({ length: 20 }, (_, i) => nonce0 + i));
    // Nothing else was sent: no second copy of a deposit under another nonce.
    expect(await pub.getTransactionCount({ address: RELAYER })).toBe(nonce0 + 20);
    expect(await statuses()).toEqual(users.map(() => 'mined'));
    const balances = await Promise.all(users.map((u) => until(() => u.client.get<any>(`/api/v1/users/${u.address}/balance`), (b) => b.mUsdDetail.available !== '0')));
    expect(balances.map((b) => b.mUsdDetail.available)).toEqual(users.map(() => '25'));
  }, 120_000);
});
