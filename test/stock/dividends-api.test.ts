/**
 * A dividend through the whole stack: `tokex corporate-actions add` (the real CLI) against the
 * running stack's data directory, the executor paying it (ex-date today: at once), and the stock
 * API's `GET corporate-action` showing it `applied` with its transaction and, for a holder, its
 * DIVIDEND operation with amount and transaction. Bad input is refused by the CLI naming the field.
 */
import { execFile } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, type Address } from 'viem';
import { cashTokenAbi } from '../../src/chain/abi/generated/index.ts';
import { newYorkDate } from '../../src/marketdata/corporate-actions.ts';
import { until } from '../support/poll.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { openSocket } from '../support/ws-client.ts';

const run = promisify(execFile);
let t: TestStack;

beforeAll(async () => {
  t = await startTestStack({ CORPORATE_ACTIONS_TICK_MS: '100', DIVIDEND_WITHHOLDING_BPS: '1500' });
}, 120_000);
afterAll(async () => {
  await t?.stop();
});

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: t.dataDir, LOG_LEVEL: 'silent' };
  delete env.DATABASE_URL;
  try {
    const { stdout, stderr } = await run(process.execPath, ['bin/tokex.mjs', 'corporate-actions', ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('a dividend through the CLI, the executor and the API', () => {
  it('lists the file\'s past actions as applied before the venue; pays a dividend added for today and shows it', async () => {
    const before = await t.readOnly.get<any>('/api/v1/corporate-action', { symbol: 'MSFT' });
    expect(before.rows.length).toBeGreaterThan(0);
    for (const row of before.rows) expect(row).toMatchObject({ status: 'applied', txHash: null });

    const today = newYorkDate(Date.now());
    const added = await cli(['add', '--symbol', 'aapl', '--dividend', '0.5', '--ex-date', today, '--json']);
    expect(added.stderr).toBe('');
    expect(JSON.parse(added.stdout)).toMatchObject({ actionId: `AAPL-${today}`, symbol: 'AAPL', type: 'DIVIDEND', exDate: today, amount: '0.5', currency: 'USD', status: 'scheduled' });

    const holder = t.demo.wallets[0].address.toLowerCase() as Address;
    // The writable key is bound to wallets[0]: its own DIVIDEND operations come by default.
    const page = await until(
      () => t.writable.get<any>('/api/v1/corporate-action', { symbol: 'AAPL' }),
      (p) => p.rows[0]?.exDate === today && p.rows[0]?.status === 'applied',
      30_000,
    );
    const row = page.rows[0];
    expect(row.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(row.dividend).toMatchObject({ withholdingBps: 1500, cashToken: t.demo.stock.contracts.cashToken.toLowerCase() });
    const [op] = row.operations;
    expect(op).toMatchObject({ operationType: 'DIVIDEND', operationStatus: 'completed', userAddress: holder, symbol: 'AAPL' });
    expect(op.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    // amount = shares × 0.5 × 85%, rounded to the cash token's 6 decimals (within one unit).
    const shares = Number(op.shares);
    expect(Math.abs(Number(op.amount) - shares * 0.5 * 0.85)).toBeLessThanOrEqual(0.000001);
    expect(shares).toBeGreaterThan(0);

    // The payment is on chain: the transaction moved exactly that amount to the holder.
    const client = createPublicClient({ transport: http(t.stack.rpcUrl) });
    const receipt = await client.getTransactionReceipt({ hash: op.txHash });
    const transfer = receipt.logs.find((l) => l.address.toLowerCase() === t.demo.stock.contracts.cashToken.toLowerCase() && l.topics[2]?.toLowerCase().endsWith(holder.slice(2)));
    expect(transfer).toBeDefined();
    expect(BigInt(transfer!.data)).toBe(BigInt(Math.round(Number(op.amount) * 1e6)));
    expect(await client.readContract({ address: t.demo.stock.contracts.cashToken, abi: cashTokenAbi, functionName: 'balanceOf', args: [row.dividend.distributor] })).toBe(0n);

    // Another holder's operations, asked by address with the read-only key.
    const other = t.demo.wallets[1].address.toLowerCase();
    const theirs = await t.readOnly.get<any>('/api/v1/corporate-action', { symbol: 'AAPL', userAddress: other });
    expect(theirs.rows[0].operations[0]).toMatchObject({ userAddress: other, operationStatus: 'completed' });

    const listed = JSON.parse((await cli(['list', '--symbol', 'AAPL', '--json'])).stdout);
    expect(listed[0]).toMatchObject({ exDate: today, status: 'applied', txHash: row.txHash });
  }, 60_000);

  it('refuses an unknown symbol, a past ex-date and a second action on a symbol\'s date, naming the field', async () => {
    const today = newYorkDate(Date.now());
    const yesterday = newYorkDate(Date.now() - 86_400_000);
    const unknown = await cli(['add', '--symbol', 'ZZZZ', '--dividend', '1', '--ex-date', today]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toBe('error: symbol: "ZZZZ" is not listed\n');
    const past = await cli(['add', '--symbol', 'MSFT', '--dividend', '1', '--ex-date', yesterday]);
    expect(past.stderr).toBe(`error: exDate: ${yesterday} is in the past (today in New York is ${today})\n`);
    const twice = await cli(['add', '--symbol', 'AAPL', '--dividend', '1', '--ex-date', today]);
    expect(twice.stderr).toBe(`error: exDate: AAPL already has a corporate action on ${today}\n`);
    const both = await cli(['add', '--symbol', 'AAPL', '--dividend', '1', '--split', '2:1', '--ex-date', today]);
    expect(both.stderr).toBe('error: dividend: give exactly one of --dividend <amount> and --split <A:B>\n');
  }, 60_000);
});

describe('README example', () => {
  it('runs examples/dividend.ts: schedules a dividend for today with the CLI, sees it paid on chain, and the wallet\'s USDC grows by its operation', async () => {
    // The holder's `operations` stream carries the DIVIDEND operation once paid.
    const key = t.demo.stock.keys.writable;
    const socket = await openSocket(t.demo.stock.wsUrl);
    const ts = Date.now();
    const nonce = randomUUID();
    socket.send({ op: 'auth', id: 'auth', apiKey: key.apiKey, ts, nonce, sign: createHmac('sha256', key.apiSecret).update(['GET', '/api/v1/ws', String(ts), nonce, ''].join('\n')).digest('hex') });
    await socket.next((f) => f.type === 'authenticated');
    socket.send({ op: 'subscribe', id: 'ops', channel: 'operations' });
    await socket.next((f) => f.type === 'subscribed' && f.id === 'ops');

    // The stack under test keeps its data in DATA_DIR's SQLite: the example's CLI must too, whatever
    // database the suite's environment names.
    const { DATABASE_URL: _d, DATABASE_SCHEMA: _s, REDIS_URL: _r, ...env } = process.env;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'examples/dividend.ts'], { env: { ...env, DATA_DIR: t.dataDir } });
    const today = newYorkDate(Date.now());
    const [, symbol] = /^holder 0x[0-9a-f]{40}: ([A-Z]+) on (\d{4}-\d{2}-\d{2})$/m.exec(stdout) ?? [];
    // AAPL has today's action from the first test: the example takes another stock the wallet holds.
    expect(symbol).toMatch(/^[A-Z]+$/);
    expect(symbol).not.toBe('AAPL');
    expect(stdout).toContain(`scheduled ${symbol}-${today}: 0.25 USD a share, scheduled`);
    const [, gross, withheld, net] = /^applied in 0x[0-9a-f]{64}: \d+ holders of [\d.]+ shares at block \d+; gross ([\d.]+), withheld ([\d.]+) \(15 %\), paid ([\d.]+)$/m.exec(stdout) ?? [];
    expect(parseDecimalUnits(gross) - parseDecimalUnits(withheld)).toBe(parseDecimalUnits(net));
    const [, shares, amount] = /^operation \S+: completed, ([\d.]+) shares → ([\d.]+) USDC in 0x[0-9a-f]{64}$/m.exec(stdout) ?? [];
    expect(Number(shares)).toBeGreaterThan(0);
    // The wallet received exactly its operation's amount.
    expect(stdout).toContain(`wallet USDC +${amount}\n`);
    const [, operationId] = /^operation (\S+): completed/m.exec(stdout) ?? [];
    const frame = await socket.next((f) => f.type === 'update' && f.channel === 'operations' && f.data.operationId === operationId, { timeoutMs: 20_000 });
    expect(frame.data).toMatchObject({ operationType: 'DIVIDEND', operationStatus: 'completed', symbol, shares, amount });
    socket.close();
  }, 120_000);
});

/** A decimal string in the cash token's 6-decimal units, exactly. */
function parseDecimalUnits(v: string): bigint {
  const [i, f = ''] = v.split('.');
  return BigInt(i) * 1_000_000n + BigInt((f + '000000').slice(0, 6));
}
