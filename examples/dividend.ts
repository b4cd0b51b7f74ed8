/**
 * A cash dividend on the demo venue: the operator schedules one for today with the CLI
 * (`tokex corporate-actions add`), the executor pays the holders of record on chain through the
 * Merkle distributor at once (the ex-date is today), and the demo wallet sees its DIVIDEND operation
 * and the cash token arrive in its wallet, nothing sent by the wallet. Run against `npm start`:
 *
 *   npx tsx examples/dividend.ts [SYMBOL]      (DATA_DIR defaults to ./data)
 *
 * SYMBOL: a listed stock with no corporate action today (one action per symbol and day); by default
 * the first such stock the demo wallet holds. docs/corporate-actions.md has every rule.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPublicClient, erc20Abi, formatUnits, http, parseUnits, type Address } from 'viem';
import { StockClient } from '@tokex/sdk';

const dataDir = process.env.DATA_DIR ?? 'data';
const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo.json'), 'utf8'));
const api = new StockClient({ baseUrl: demo.stock.baseUrl, chainId: demo.chainId, ...demo.stock.keys.writable });
const wallet = (demo.wallets[0].address as string).toLowerCase() as Address;
const chain = createPublicClient({ transport: http(demo.rpcUrl) });
const usdc: Address = demo.stock.contracts.cashToken;
const AMOUNT_PER_SHARE = '0.25';

type Action = { symbol: string; exDate: string; status?: string; txHash?: string | null; reason?: string | null; dividend?: Record<string, any> | null; operations?: Array<Record<string, any>> };

// Today in New York, the calendar the ex-dates are in.
const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York', year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
const actionToday = async (symbol: string) => (await api.getCorporateActions<Action>({ symbol })).rows.find((r) => r.exDate === today);

// 1. A stock the wallet holds, with no action today.
const balance = await api.getBalance(wallet);
const held = (balance.tokenBalances as Array<Record<string, any>>).filter((t) => t.isStock && parseUnits(t.walletBalance, t.decimals) + parseUnits(t.exchangeBalance, t.decimals) > 0n);
let symbol = process.argv[2]?.toUpperCase();
if (symbol === undefined) {
  for (const t of held) if ((await actionToday(t.stockSymbol)) === undefined) { symbol = t.stockSymbol; break; }
}
if (symbol === undefined) throw new Error(`no stock held by ${wallet} is free of a corporate action today: name one`);
console.log(`holder ${wallet}: ${symbol} on ${today}`);

// 2. The operator schedules it (the CLI writes to the venue's database, as on the operator's host).
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const before = await chain.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] });
const added = JSON.parse(
  execFileSync(process.execPath, [path.join(root, 'bin/tokex.mjs'), 'corporate-actions', 'add', '--symbol', symbol, '--dividend', AMOUNT_PER_SHARE, '--ex-date', today, '--json'], {
    env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    encoding: 'utf8',
  }),
);
console.log(`scheduled ${added.actionId}: ${added.amount} ${added.currency} a share, ${added.status}`);

// 3. The executor pays it: wait until the API shows it applied (or failed, with its reason).
let action: Action | undefined;
for (const end = Date.now() + 90_000; Date.now() < end; await new Promise((r) => setTimeout(r, 500))) {
  action = await actionToday(symbol);
  if (action?.status === 'applied' || action?.status === 'failed') break;
}
if (action?.status !== 'applied') throw new Error(`dividend not applied: ${action?.status ?? 'not listed'} ${action?.reason ?? ''}`);
const d = action.dividend!;
console.log(`applied in ${action.txHash}: ${d.holders} holders of ${d.sharesOfRecord} shares at block ${d.recordBlock}; gross ${d.grossAmount}, withheld ${d.withholdingAmount} (${d.withholdingBps / 100} %), paid ${d.netAmount}`);

// 4. The wallet's own DIVIDEND operation, and the cash that reached it.
const op = action.operations?.[0];
if (op === undefined) throw new Error(`${wallet} has no DIVIDEND operation in ${symbol}`);
const after = await chain.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [wallet] });
console.log(`operation ${op.operationId}: ${op.operationStatus}, ${op.shares} shares → ${op.amount} USDC in ${op.txHash}`);
console.log(`wallet USDC +${formatUnits(after - before, 6)}`);
