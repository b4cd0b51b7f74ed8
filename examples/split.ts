/**
 * A stock split on the demo venue: the demo wallet rests a limit sell, the operator schedules a
 * split for today with the CLI (`tokex corporate-actions add --split 2:1`), and at the split's minute
 * (`splitEffectiveAt`: a split added on its ex-date takes effect at the first minute at least 5 s
 * later) the Stock token's multiplier changes on chain in one transaction. Every balance and the
 * total supply double, the resting order is restated (twice the quantity at half the limit), the
 * quotes halve, and the holding's value stays what it was. Run against `npm start`:
 *
 *   npx tsx examples/split.ts [SYMBOL] [RATIO]      (DATA_DIR defaults to ./data; RATIO like 2:1)
 *
 * SYMBOL: a listed stock with no corporate action today; by default the first such stock the demo
 * wallet holds. docs/corporate-actions.md ("Splits") has every rule.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPublicClient, createWalletClient, erc20Abi, formatUnits, http, parseUnits, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { StockClient, selfSubmitOperation, selfSubmitOrder } from '@tokex/sdk';

const dataDir = process.env.DATA_DIR ?? 'data';
const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo.json'), 'utf8'));
const api = new StockClient({ baseUrl: demo.stock.baseUrl, chainId: demo.chainId, ...demo.stock.keys.writable });
const chain = { id: demo.chainId, name: 'local', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [demo.rpcUrl] } } };
const wallet = createWalletClient({ account: privateKeyToAccount(demo.wallets[0].privateKey), chain, transport: http(demo.rpcUrl) });
const reader = createPublicClient({ chain, transport: http(demo.rpcUrl) });
const holder = wallet.account.address.toLowerCase() as Address;
const ratio = process.argv[3] ?? '2:1';
const [to, from] = ratio.split(':').map(BigInt);
await api.syncTime();

type Action = { symbol: string; exDate: string; status?: string; txHash?: string | null; reason?: string | null };
type Token = { stockSymbol: string; isStock: boolean; decimals: number; walletBalance: string; exchangeBalance: string; lockedExchangeBalance: string; tokenAddress: string };

const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
const actionToday = async (symbol: string) => (await api.getCorporateActions<Action>({ symbol })).rows.find((r) => r.exDate === today);
const tokens = async () => (await api.getBalance(holder)).tokenBalances as Token[];
const sharesOf = (t: Token) => parseUnits(t.walletBalance, t.decimals) + parseUnits(t.exchangeBalance, t.decimals) + parseUnits(t.lockedExchangeBalance, t.decimals);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// 1. A stock the wallet holds, with no action today.
let symbol = process.argv[2]?.toUpperCase();
if (symbol === undefined) {
  for (const t of await tokens()) if (t.isStock && sharesOf(t) > 0n && (await actionToday(t.stockSymbol)) === undefined) { symbol = t.stockSymbol; break; }
}
if (symbol === undefined) throw new Error(`no stock held by ${holder} is free of a corporate action today: name one`);
const token = (await tokens()).find((t) => t.stockSymbol === symbol)!;
const stock = token.tokenAddress as Address;
console.log(`holder ${holder}: ${symbol} on ${today}, split ${ratio}`);

// 2. A limit sell of one share resting far above the market (it stays open across the split),
// after depositing that share into the exchange when the wallet has none there.
if (parseUnits(token.exchangeBalance, token.decimals) < parseUnits('1', token.decimals)) {
  const dep = await selfSubmitOperation(api, wallet, reader, 'stockDeposit', { tokenAddress: stock, tokenAmount: '1' }, { timeoutMs: 60_000 });
  console.log(`deposited 1 ${symbol} into the exchange: ${dep.operationStatus}`);
}
const price = Number((await api.getPrice(symbol)).last);
const limit = (Math.ceil(price * 2 * 100) / 100).toFixed(2);
const order = await selfSubmitOrder(api, wallet, reader, { symbol, side: 'Sell', type: 'Limit', quantity: '1', price: limit, timeInForce: 'DAY', deadline: Math.floor(Date.now() / 1000) + 86_400 }, { until: 'open', timeoutMs: 60_000 });
console.log(`resting order ${order.orderId}: sell ${order.quantity} at ${order.price}`);

const before = { shares: sharesOf((await tokens()).find((t) => t.stockSymbol === symbol)!), supply: await reader.readContract({ address: stock, abi: erc20Abi, functionName: 'totalSupply' }), price: (await api.getPrice(symbol)).last };
console.log(`before: ${formatUnits(before.shares, 18)} shares at ${before.price}, value ${(Number(formatUnits(before.shares, 18)) * Number(before.price)).toFixed(2)}; supply ${formatUnits(before.supply, 18)}`);

// 3. The operator schedules it (the CLI writes to the venue's database, as on the operator's host).
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const added = JSON.parse(
  execFileSync(process.execPath, [path.join(root, 'bin/tokex.mjs'), 'corporate-actions', 'add', '--symbol', symbol, '--split', ratio, '--ex-date', today, '--json'], {
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    encoding: 'utf8',
  }),
);
console.log(`scheduled ${added.actionId}: ${added.ratio} from ${added.effectiveAt}, ${added.status}`);

// 4. Applied on chain at the split's minute: wait for the API to say so, then for the indexer.
let action: Action | undefined;
for (const end = Date.now() + 150_000; Date.now() < end; await sleep(500)) {
  action = await actionToday(symbol);
  if (action?.status === 'applied' || action?.status === 'failed') break;
}
if (action?.status !== 'applied') throw new Error(`split not applied: ${action?.status ?? 'not listed'} ${action?.reason ?? ''}`);
console.log(`applied in ${action.txHash}`);
let after: Token | undefined;
let restated = order;
for (const end = Date.now() + 60_000; Date.now() < end; await sleep(500)) {
  after = (await tokens()).find((t) => t.stockSymbol === symbol)!;
  restated = await api.getOrder(order.orderId);
  if (sharesOf(after) === (before.shares * to) / from && restated.quantity !== order.quantity) break;
}
const supply = await reader.readContract({ address: stock, abi: erc20Abi, functionName: 'totalSupply' });
// The quotes move to the new shares at the split's minute too.
let quote = await api.getPrice(symbol);
for (const end = Date.now() + 60_000; Number(quote.last) > (Number(before.price) * Number(from) * 1.5) / Number(to) && Date.now() < end; await sleep(500)) quote = await api.getPrice(symbol);
const shares = sharesOf(after!);
console.log(`after: ${formatUnits(shares, 18)} shares at ${quote.last}, value ${(Number(formatUnits(shares, 18)) * Number(quote.last)).toFixed(2)}; supply ${formatUnits(supply, 18)}`);
console.log(`resting order ${restated.orderId}: sell ${restated.quantity} at ${restated.price} (${restated.state})`);
console.log(`shares x${Number(shares) / Number(before.shares)}, supply x${Number(supply) / Number(before.supply)}`);
