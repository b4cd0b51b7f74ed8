/**
 * `tokex stock|perp|stream …` as a user runs them: the real `bin/tokex.mjs` in a child process
 * against the whole stack, credentials from the stack's demo.json through DATA_DIR.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { formatDisplayAmount } from '@tokex/contract';
import { until } from '../support/poll.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

let t: TestStack;
const wei = (amount: string) => parseUnits(amount, 18);

function tokex(args: string[], opts: { lines?: number } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { DATABASE_URL: _d, DATABASE_SCHEMA: _s, REDIS_URL: _r, ...env } = process.env;
  const child = spawn(process.execPath, ['bin/tokex.mjs', ...args], { env: { ...env, DATA_DIR: t.dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  return new Promise((resolve) => {
    child.stdout.on('data', (d) => {
      stdout += String(d);
      // A stream runs until stopped: stop it once it has printed enough.
      if (opts.lines !== undefined && stdout.split('\n').filter(Boolean).length >= opts.lines) child.kill('SIGTERM');
    });
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  t = await startTestStack();
});
afterAll(async () => {
  await t?.stop();
});

describe('tokex trading commands', () => {
  it('stock quote: a table by default, the REST body with --json', async () => {
    const human = await tokex(['stock', 'quote', 'AAPL', 'MSFT']);
    expect(human.code).toBe(0);
    expect(human.stdout.split('\n')[0]).toMatch(/^symbol\s+bid\s+ask\s+last\s+market\s+time$/);
    expect(human.stdout).toMatch(/\nAAPL\s+\d/);
    const json = await tokex(['stock', 'quote', 'AAPL', '--json']);
    const [q] = JSON.parse(json.stdout);
    expect(q).toMatchObject({ symbol: 'AAPL', marketStatus: 'open', basicInfo: { symbol: 'AAPL', last: q.last }, onChain: { contractAddress: t.demo.stock.contracts.stocks.AAPL } });
  });

  it('stock balance: mUSD from mUsdDetail and every token, the cash token too; the REST body with --json', async () => {
    const user = t.demo.stock.keys.writable.userAddress;
    const rest = await t.writable.getBalance(user);
    const human = await tokex(['stock', 'balance']);
    expect(human.code).toBe(0);
    // Amounts at mUSD's display precision (two places, truncated); --json keeps them exact.
    expect(human.stdout.split('\n')[0]).toBe(`mUSD available ${formatDisplayAmount(rest.mUsdDetail.available, 'mUSD')}, locked ${formatDisplayAmount(rest.mUsdDetail.locked, 'mUSD')}`);
    expect(human.stdout).toMatch(/\nAAPL\s+\d/);
    expect(human.stdout).toMatch(/\nUSDC\s+\d+\.\d\d\s+0\.00\s+0\.00$/m);
    const json = JSON.parse((await tokex(['stock', 'balance', '--json'])).stdout);
    expect(json).toMatchObject({ musdBalance: rest.musdBalance, mUsdBalance: rest.mUsdBalance, mUsdDetail: rest.mUsdDetail });
  });

  it('perp: a signed limit order placed, listed and cancelled, the account read', async () => {
    const mark = await until(async () => (await t.perpTrader!.get<Array<{ markPrice: string | null }>>('tickers', { symbol: 'BTC-USD' }))[0].markPrice, (m) => m !== null);
    // As the API writes decimals: no trailing zero.
    const price = String(Math.floor(Number(mark) * 0.97 * 10) / 10);
    const placed = await tokex(['perp', 'order', 'buy', 'BTC-USD', '0.001', '--price', price, '--json']);
    expect(placed.stderr).toBe('');
    const order = JSON.parse(placed.stdout);
    expect(order).toMatchObject({ status: 'NEW', orderId: expect.any(String) });
    const open = JSON.parse((await tokex(['perp', 'orders', '--json'])).stdout);
    expect(open.rows.map((r: { orderId: string }) => r.orderId)).toContain(order.orderId);
    const human = await tokex(['perp', 'orders']);
    expect(human.stdout).toContain(order.orderId);
    expect(human.stdout).toContain(price);
    expect((await tokex(['perp', 'cancel', order.orderId])).code).toBe(0);
    const after = JSON.parse((await tokex(['perp', 'orders', '--json'])).stdout);
    expect(after.rows.map((r: { orderId: string }) => r.orderId)).not.toContain(order.orderId);
    const account = JSON.parse((await tokex(['perp', 'account', '--json'])).stdout);
    expect(account).toMatchObject({ account: t.demo.wallets[0].address.toLowerCase(), asset: 'USDC' });
  });

  it('stock: One Click once, then cash in, a market buy and sell, a resting limit cancelled and cash out, each awaited', async () => {
    const user = t.demo.stock.keys.writable.userAddress;
    const json = async (args: string[]) => {
      const r = await tokex([...args, '--json']);
      expect(r.stderr, args.join(' ')).toBe('');
      expect(r.code, args.join(' ')).toBe(0);
      return JSON.parse(r.stdout);
    };
    const musd = async () => wei((await t.writable.get<any>(`/api/v1/users/${user}/balance`)).mUsdDetail.available);

    expect(await json(['stock', 'oneclick'])).toMatchObject({ status: 'enable', delegationStatus: 'enabled', delegatee: expect.stringMatching(/^0x/) });

    const before = await musd();
    const deposit = await json(['stock', 'deposit', '500']);
    expect(deposit).toMatchObject({ operationStatus: 'completed', kind: 'deposit', tokenAmount: '500', mUsdAmount: '500' });
    expect((await musd()) - before).toBe(wei('500'));

    const bought = await json(['stock', 'buy', 'AAPL', '--notional', '100']);
    expect(bought).toMatchObject({ state: 'history', side: 'Buy', history: { status: 'FILLED' } });
    expect(wei(bought.history.filledQuantity)).toBeGreaterThan(0n);
    const sold = await json(['stock', 'sell', 'AAPL', '--quantity', '0.1']);
    expect(sold).toMatchObject({ state: 'history', side: 'Sell', history: { status: 'FILLED', filledQuantity: '0.1', reason: null } });

    // What it waited for failed: a notional too small to buy the smallest unit is rejected; the
    // order is printed with the executor's reason, the reason goes to stderr, and the exit code is 1.
    const tiny = await tokex(['stock', 'buy', 'AAPL', '--notional', '0.000000000000000001', '--json']);
    expect(tiny.code).toBe(1);
    const rejected = JSON.parse(tiny.stdout);
    expect(rejected).toMatchObject({ state: 'history', side: 'Buy', history: { status: 'REJECTED', filledQuantity: '0' } });
    expect(rejected.history.reason).toMatch(/^notional too small: 0\.000000000000000001 mUSD does not buy the smallest unit of AAPL at the ask \d+(\.\d+)? plus the 10 bps fee$/);
    expect(tiny.stderr).toBe(`error: order ${rejected.orderId} REJECTED: ${rejected.history.reason}\n`);

    // A limit far below the market rests; the command answers once it is open, and cancel waits for CANCELED.
    const resting = await json(['stock', 'buy', 'AAPL', '--quantity', '1', '--price', '1']);
    expect(resting).toMatchObject({ state: 'open', type: 'Limit', price: '1', openOrder: { status: 'OPEN' } });
    const human = await tokex(['stock', 'cancel', resting.orderId]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^orderId\\s+${resting.orderId}$`, 'm'));
    expect(human.stdout).toMatch(/^status\s+CANCELED$/m);
    // The cancel's own transaction, not the placement's.
    const cancelTx = /^cancelTxHash\s+(0x[0-9a-f]{64})$/m.exec(human.stdout)?.[1];
    expect(cancelTx, human.stdout).toBeDefined();
    expect(cancelTx).not.toBe(resting.txHash);
    expect(human.stdout).not.toContain(resting.txHash);

    const beforeOut = await musd();
    const withdrawal = await json(['stock', 'withdraw', '100']);
    expect(withdrawal).toMatchObject({ operationStatus: 'completed', kind: 'withdrawal', tokenAmount: '100' });
    expect(beforeOut - (await musd())).toBe(wei('100'));
  });

  it('perp: collateral deposited from the wallet and withdrawn to it (the wallet signs), each awaited; the same client id answers the first withdrawal; another key signs none', async () => {
    const balance = async () => wei((await t.perpTrader!.get<{ balance: string }>('account')).balance);
    // The demo deposit of wallets[0] is credited at start-up: wait for it before measuring.
    await until(balance, (b) => b > 0n);
    const before = await balance();
    const dep = await tokex(['perp', 'deposit', '40', '--json']);
    expect(dep.stderr).toBe('');
    expect(JSON.parse(dep.stdout)).toMatchObject({ status: 'CREDITED', amount: '40' });
    expect((await balance()) - before).toBe(wei('40'));

    const out = await tokex(['perp', 'withdraw', '25', '--client-id', 'cli-test-withdrawal-1', '--json']);
    expect(out.stderr).toBe('');
    const w = JSON.parse(out.stdout);
    expect(w).toMatchObject({ clientWithdrawalId: 'cli-test-withdrawal-1', amount: '25', status: 'COMPLETED', txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect((await balance()) - before).toBe(wei('15'));
    const again = JSON.parse((await tokex(['perp', 'withdraw', '25', '--client-id', 'cli-test-withdrawal-1', '--json'])).stdout);
    expect(again).toEqual(w);
    expect((await balance()) - before).toBe(wei('15'));

    // The vault pays only the wallet's own signature: a key that is not the API key's wallet signs nothing.
    const stranger = await tokex(['perp', 'withdraw', '5', '--client-id', 'cli-test-withdrawal-stranger', '--private-key', generatePrivateKey(), '--json']);
    expect(stranger.code).toBe(1);
    expect(stranger.stdout).toBe('');
    expect(stranger.stderr).toMatch(/^error: wallet: 0x[0-9a-fA-F]{40} is not the wallet the API key is bound to \(0x[0-9a-fA-F]{40}\)/);
    const listed = (await t.perpTrader!.listWithdrawals({ limit: 100 })).rows.map((r) => r.clientWithdrawalId);
    expect(listed).toContain('cli-test-withdrawal-1');
    expect(listed).not.toContain('cli-test-withdrawal-stranger');
    expect((await balance()) - before).toBe(wei('15'));
  });

  it('stream book: the snapshot and then updates, one JSON line each, seq + 1', async () => {
    const r = await tokex(['stream', 'book', 'BTC-USD', '--json'], { lines: 3 });
    const lines = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ type: 'snapshot', data: { bids: expect.any(Array), asks: expect.any(Array) } });
    expect(lines[1].type).toBe('update');
    expect(lines[1].seq).toBe(lines[0].seq + 1);
    expect(lines[2].seq).toBe(lines[0].seq + 2);
  });

  it('perp: a stop waits UNTRIGGERED and is read by id and by client id, a resting limit is amended, a take-profit closes the position; refusals say why', async () => {
    const json = async (args: string[]) => {
      const r = await tokex([...args, '--json']);
      expect(r.stderr, args.join(' ')).toBe('');
      expect(r.code, args.join(' ')).toBe(0);
      return JSON.parse(r.stdout);
    };
    const mark = Number(await until(async () => (await t.perpTrader!.get<Array<{ markPrice: string | null }>>('tickers', { symbol: 'BTC-USD' }))[0].markPrice, (m) => m !== null));
    // On the 0.1 tick, as the API writes decimals.
    const at = (f: number) => String(Math.floor(mark * f * 10) / 10);

    // A sell stop well below the mark waits for it.
    const stop = await json(['perp', 'order', 'sell', 'BTC-USD', '0.001', '--stop', at(0.9), '--client-id', 'cli-stop-1']);
    expect(stop).toMatchObject({ type: 'STOP_MARKET', status: 'UNTRIGGERED', triggerPrice: at(0.9), triggerBy: 'MARK', triggeredAt: null, clientOrderId: 'cli-stop-1', size: '0.001' });
    const listed = await tokex(['perp', 'orders']);
    expect(listed.stdout.split('\n')[0]).toMatch(/^orderId\s+symbol\s+side\s+type\s+price\s+triggerPrice\s+size\s+filledSize\s+status\s+createdAt\s+updatedAt$/);
    // Prices in USD at two places, sizes at the lot as answered, times in ISO.
    expect(listed.stdout).toMatch(new RegExp(`^${stop.orderId}\\s+BTC-USD\\s+SELL\\s+STOP_MARKET\\s+-\\s+${formatDisplayAmount(at(0.9), 'USD').replace('.', '\\.')}\\s+0\\.001\\s+0\\s+UNTRIGGERED\\s+\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\s+\\d{4}-`, 'm'));
    const byId = await json(['perp', 'order-status', stop.orderId]);
    expect(byId).toMatchObject({ orderId: stop.orderId, status: 'UNTRIGGERED', triggerPrice: at(0.9) });
    expect(await json(['perp', 'order-status', '--client-id', 'cli-stop-1'])).toEqual(byId);
    const human = await tokex(['perp', 'order-status', stop.orderId]);
    expect(human.stdout).toMatch(/^status\s+UNTRIGGERED$/m);
    expect((await json(['perp', 'cancel', stop.orderId])).status).toBe('CANCELED');

    // A resting buy: a smaller size keeps it, then a new price moves it, under the same id.
    const limit = await json(['perp', 'order', 'buy', 'BTC-USD', '0.002', '--price', at(0.97)]);
    expect(limit).toMatchObject({ status: 'NEW', size: '0.002', price: at(0.97) });
    expect(await json(['perp', 'amend', limit.orderId, '--size', '0.001'])).toMatchObject({ orderId: limit.orderId, size: '0.001', remainingSize: '0.001', price: at(0.97), status: 'NEW' });
    const moved = await json(['perp', 'amend', limit.orderId, '--price', at(0.96)]);
    expect(moved).toMatchObject({ orderId: limit.orderId, size: '0.001', price: at(0.96), status: 'NEW' });
    // The answer is the order as amended: its updatedAt is the amendment's, after the placement's.
    expect(moved.updatedAt).toBeGreaterThan(limit.createdAt);
    const nothing = await tokex(['perp', 'amend', limit.orderId]);
    expect([nothing.code, nothing.stderr]).toEqual([1, 'error: price: give a new price, a new size, or both\n']);
    await json(['perp', 'cancel', limit.orderId]);

    // A position, and a take-profit that will close all of it, watching the last trade.
    expect((await json(['perp', 'order', 'buy', 'BTC-USD', '0.001'])).status).toBe('FILLED');
    const tp = await json(['perp', 'order', 'sell', 'BTC-USD', '--take-profit', at(1.2), '--trigger-by', 'LAST', '--close-position']);
    expect(tp).toMatchObject({ type: 'TAKE_PROFIT_MARKET', status: 'UNTRIGGERED', triggerPrice: at(1.2), triggerBy: 'LAST', closePosition: true, reduceOnly: true, size: '0' });
    await json(['perp', 'cancel', tp.orderId]);
    await t.perpTrader!.closePosition(privateKeyToAccount(t.demo.wallets[0].privateKey), { symbol: 'BTC-USD' });

    const both = await tokex(['perp', 'order', 'sell', 'BTC-USD', '0.001', '--stop', at(0.9), '--close-position']);
    expect([both.code, both.stderr]).toEqual([1, 'error: size: omit it with --close-position: the whole position is closed\n']);
    const which = await tokex(['perp', 'order-status']);
    expect([which.code, which.stderr]).toEqual([1, 'error: orderId: give an order id or --client-id, one of them\n']);
  }, 120_000);

  it('answers a person in one line: listed symbols, the BTC-USD spelling, a missing file; tables with headers and ids', async () => {
    const appl = await tokex(['stock', 'quote', 'APPL']);
    expect([appl.code, appl.stdout]).toEqual([1, '']);
    expect(appl.stderr).toMatch(/^error: .*"APPL" is not listed.*; listed: AAPL, TSLA, NVDA, MSFT, SPY\n$/);
    const ccxt = await tokex(['perp', 'order', 'buy', 'BTC/USD', '0.001']);
    expect([ccxt.code, ccxt.stderr]).toEqual([1, "error: symbol: BTC/USD is CCXT's spelling: this venue's symbol is BTC-USD\n"]);
    const xrp = await tokex(['perp', 'order', 'buy', 'XRP-USD', '0.001']);
    expect(xrp.stderr).toMatch(/^error: .*"XRP-USD" is not listed.*; listed: BTC-USD, ETH-USD, /);
    const nope = await tokex(['marketdata', 'import', '--symbol', 'AAPL', '--file', 'nope.csv']);
    expect([nope.code, nope.stderr]).toEqual([1, 'error: --file: no such file: nope.csv\n']);
    // The same failure with --debug: the same first line, then the stack (where it was thrown).
    const debug = await tokex(['marketdata', 'import', '--symbol', 'AAPL', '--file', 'nope.csv', '--debug']);
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/^error: --file: no such file: nope\.csv\n\w*Error: .*nope\.csv\n(?: {4}at .+\n)+$/);
    expect(debug.stderr).toMatch(/ {4}at .*src\/cli\/marketdata-command\.ts:\d+/);
    const keys = await tokex(['keys', 'list']);
    expect(keys.stdout.split('\n')[0]).toMatch(/^apiKey\s+api\s+permissions\s+state\s+scope\s+user\s+ips\s+expires\s+label$/);
    expect(keys.stdout).toContain(t.demo.stock.keys.writable.apiKey);
    const actions = await tokex(['corporate-actions', 'list']);
    expect(actions.stdout.split('\n')[0]).toMatch(/^id\s+symbol\s+type\s+exDate\s/);
    expect(actions.stdout).toMatch(/^[A-Z]+-\d{4}-\d\d-\d\d\s+[A-Z]+\s+(DIVIDEND|SPLIT)\s/m);
    const help = await tokex(['corporate-actions', 'add', '--help']);
    expect(help.stdout).toMatch(/dividend/);
    expect(help.stdout).toMatch(/split/);
    // Ten CLI processes one after another: about 2 s each on a quiet machine, 6 under a loaded CI run.
  }, 180_000);

  it('refuses a bad side with a one-line error and exit code 1', async () => {
    const r = await tokex(['perp', 'order', 'hold', 'BTC-USD', '1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: side: must be BUY or SELL, not "hold"/);
  });
});
