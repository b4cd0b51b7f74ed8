/**
 * A crash on the demo venue, played with `tokex marketdata set-price`: a trader at 19× on AAPL-USD is
 * liquidated through the book when AAPL falls about 3 %, the insurance fund takes the liquidation fee; then
 * a second wallet adds liquidity to the pool and withdraws collateral to its wallet on chain (the
 * wallet signs the withdrawal; the vault pays only against that signature). The rules are
 * docs/perp-risk.md. Run against `npm start` (it pins AAPL for a while, then releases it; AAPL then
 * walks on from the crash's level: `npx tokex demo reset`, with the stack stopped, restores the seeded demo):
 *
 *   npx tsx examples/perp-risk.ts           (DATA_DIR defaults to ./data)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createPublicClient, erc20Abi, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { PerpClient, type PlacedOrder } from '@tokex/sdk';

const dataDir = process.env.DATA_DIR ?? 'data';
const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo.json'), 'utf8'));
const symbol = 'AAPL-USD';
const underlying = 'AAPL';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const micros = (v: string): bigint => {
  const neg = v.startsWith('-');
  const [w, f = ''] = (neg ? v.slice(1) : v).split('.');
  const m = BigInt(w) * 1_000_000n + BigInt((f + '000000').slice(0, 6));
  return neg ? -m : m;
};
const usd = (m: bigint): string => {
  const neg = m < 0n;
  const a = neg ? -m : m;
  const frac = (a % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return `${neg ? '-' : ''}${a / 1_000_000n}${frac ? '.' + frac : ''}`;
};
const setPrice = (...args: string[]) =>
  execFileSync(process.execPath, [path.join(import.meta.dirname, '..', 'bin', 'tokex.mjs'), 'marketdata', 'set-price', '--symbol', underlying, ...args, '--json'], {
    env: { ...process.env, DATA_DIR: dataDir },
    encoding: 'utf8',
  });

async function waitUntil<T>(what: string, read: () => Promise<T>, done: (v: T) => boolean, ms = 60_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(v).slice(0, 800)}`);
    await sleep(1_000);
  }
}

// 1. Two wallets of the demo, each with a key and collateral.
const traderWallet = privateKeyToAccount(demo.wallets[2].privateKey);
const lpWallet = privateKeyToAccount(demo.wallets[3].privateKey);
const trader = PerpClient.forKey(demo.perp.baseUrl, await PerpClient.createApiKey(demo.perp.baseUrl, traderWallet, { label: 'risk-trader', permissions: ['READ', 'TRADE'], chainId: demo.chainId }), demo.chainId);
const lp = PerpClient.forKey(demo.perp.baseUrl, await PerpClient.createApiKey(demo.perp.baseUrl, lpWallet, { label: 'risk-lp', permissions: ['READ', 'TRADE', 'TRANSFER'], chainId: demo.chainId }), demo.chainId);
await trader.depositCollateral(traderWallet, '1000');
await lp.depositCollateral(lpWallet, '5000');
console.log(`trader ${traderWallet.address} and liquidity provider ${lpWallet.address} deposited 1000 and 5000 USDC`);

// 2. The trader goes long about 19× its collateral at leverage 20.
await trader.setLeverage({ symbol, leverage: 20 });
const ticker = await waitUntil('a mark and an ask', () => trader.get<Array<{ markPrice: string | null; bestAsk: string | null }>>('tickers', { symbol }), (t) => t[0]?.bestAsk != null && t[0]?.markPrice != null);
const mark = micros(ticker[0].markPrice!);
const size = (19_000_000_000n * 100n) / mark; // in 0.01 lots of AAPL
const buy = await trader.placeOrder<PlacedOrder>(traderWallet, { symbol, side: 'BUY', type: 'MARKET', size: usd(size * 10_000n) });
console.log(`long ${buy.filledSize} ${symbol} at ${buy.avgPrice} (mark ${ticker[0].markPrice}), fee ${buy.fee}`);
const fundBefore = micros((await PerpClient.insuranceFund<{ balance: string }>(demo.perp.baseUrl)).balance);

// 3. AAPL falls to where the trader's equity meets its maintenance margin (2.5 % of notional),
//    equity(P) = balance + size × (P − entry) = 2.5 % × size × P, then keeps sliding 0.1 % every
//    3 s: the engine liquidates the position through the book as soon as the mark crosses.
const [pos] = (await trader.get<{ rows: Array<{ size: string; entryPrice: string }> }>('positions', { symbol })).rows;
const balance = micros((await trader.get<{ balance: string }>('account')).balance);
const sizeU = micros(pos.size);
const edge = ((((sizeU * micros(pos.entryPrice)) / 1_000_000n - balance) * 1_000_000n) * 1_000n) / (sizeU * 975n);
let price = edge - (edge % 10_000n);
try {
  for (let step = 0; ; step++) {
    setPrice('--price', usd(price));
    const gone = await waitUntil('the liquidation', () => trader.get<{ total: number }>('positions', { symbol }), (p) => p.total === 0, 3_000).then(
      () => true,
      () => false,
    );
    if (gone) break;
    if (step === 40) {
      const seen = { account: await trader.get('account'), positions: await trader.get('positions', { symbol }), ticker: await trader.get('tickers', { symbol }) };
      throw new Error(`no liquidation down to ${usd(price)}: ${JSON.stringify(seen)}`);
    }
    price = ((price * 999n) / 1_000n / 10_000n) * 10_000n;
  }
  console.log(`set-price ${underlying} down to ${usd(price)} (${usd(((mark - price) * 100_000_000n) / mark)} % below the mark at entry)`);
  const history = await waitUntil(
    'the liquidation order in the history',
    () => trader.get<{ rows: Array<{ orderId: string; liquidation: boolean; status: string; filledSize: string; avgPrice: string | null }> }>('orders/history', { symbol, limit: 10 }),
    (h) => h.rows.some((o) => o.liquidation),
  );
  const liquidation = history.rows.find((o) => o.liquidation)!;
  console.log(`liquidation order ${liquidation.orderId}: ${liquidation.status}, sold ${liquidation.filledSize} at ${liquidation.avgPrice}`);
  const txs = await waitUntil(
    'the liquidation fee in the history',
    () => trader.get<{ rows: Array<{ type: string; amount: string }> }>('account/transactions', { limit: 50 }),
    (t) => t.rows.some((r) => r.type === 'LIQUIDATION_FEE'),
  );
  const fee = -micros(txs.rows.find((r) => r.type === 'LIQUIDATION_FEE')!.amount);
  const fund = await waitUntil('the fund', () => PerpClient.insuranceFund<{ balance: string }>(demo.perp.baseUrl), (f) => micros(f.balance) >= fundBefore + fee);
  console.log(`liquidation fee ${usd(fee)} to the insurance fund: ${usd(fundBefore)} -> ${fund.balance}`);
  const account = await trader.get<{ balance: string }>('account');
  console.log(`trader balance after the liquidation: ${account.balance}`);
} finally {
  setPrice('--release');
  console.log(`released ${underlying}: it walks on from there; \`npx tokex demo reset\` (stack stopped) brings back the seeded prices`);
}

// 4. The second wallet adds liquidity to the pool, then withdraws collateral to its wallet.
const added = await lp.addLiquidity<{ shares: string; amount: string }>('1000');
// Its worth as minted: the pool's equity and shares just after the addition, as the history keeps them
// (the position's value read later follows the pool's open positions as prices move).
const history = await waitUntil(
  'the addition in the history',
  () => lp.liquidityHistory<{ rows: { action: string; shares: string; totalShares: string; poolEquity: string; lockedUntil: number }[] }>(),
  (h) => h.rows.some((r) => r.action === 'ADD'),
);
const move = history.rows.find((r) => r.action === 'ADD')!;
const worth = (micros(move.shares) * micros(move.poolEquity)) / micros(move.totalShares);
console.log(`added ${added.amount} USDC to the pool: ${move.shares} shares worth ${usd(worth)}, locked until ${new Date(move.lockedUntil).toISOString()}`);
const chain = createPublicClient({ transport: http(demo.rpcUrl) });
const token = demo.perp.contracts.collateralToken as `0x${string}`;
const before = await chain.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [lpWallet.address] });
const clientWithdrawalId = `risk-${Date.now()}`;
// The wallet signs the withdrawal (EIP-712): the vault pays only against that signature.
await lp.withdraw(lpWallet, { amount: '1500', clientWithdrawalId });
const paid = await lp.waitForWithdrawal(clientWithdrawalId);
const after = await chain.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [lpWallet.address] });
console.log(`withdrawal ${paid.status} in ${paid.txHash}: wallet +${usd(after - before)} USDC`);
