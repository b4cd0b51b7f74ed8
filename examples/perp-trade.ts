/**
 * A round on the perpetual venue with a wallet of your own, against the demo market maker:
 * create an API key with the wallet's signature, approve and deposit collateral into the margin
 * vault (the API prepares each transaction, the wallet signs it), place a limit order and a market
 * order, look at the position, and close it. Run against `npm start`:
 *
 *   npx tsx examples/perp-trade.ts           (DATA_DIR defaults to ./data)
 */
import fs from 'node:fs';
import path from 'node:path';
import { formatUnits, parseUnits } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { PerpClient, type PlacedOrder } from '@tokex/sdk';
// USD amounts for a person: cents, truncated (the API's are exact); sizes are at the lot already.
import { formatDisplayAmount } from '@tokex/contract';
const usd = (v: string | null | undefined) => (v == null ? String(v) : formatDisplayAmount(v, 'USD'));

const demo = JSON.parse(fs.readFileSync(path.join(process.env.DATA_DIR ?? 'data', 'demo.json'), 'utf8'));
const wallet = privateKeyToAccount(demo.wallets[1].privateKey);
const symbol = process.env.PERP_SYMBOL ?? 'AAPL-USD';

// 1. An API key, authorised by the wallet's EIP-712 signature (no transaction, no gas).
const created = await PerpClient.createApiKey(demo.perp.baseUrl, wallet, { label: 'example', permissions: ['READ', 'TRADE'], chainId: demo.chainId });
const api = PerpClient.forKey(demo.perp.baseUrl, created, demo.chainId);
console.log(`api key ${created.apiKey} for ${wallet.address}`);

// 2. Collateral: approve the vault, deposit, wait until the engine has credited it.
const deposit = await api.depositCollateral(wallet, '1000');
const account = await api.get<{ balance: string; freeCollateral: string }>('account');
console.log(`deposited 1000 USDC in ${deposit.txHash}: balance ${usd(account.balance)}, free ${usd(account.freeCollateral)}`);

// 3. The book the demo market maker keeps.
let book = await api.get<{ bids: string[][]; asks: string[][] }>('depth', { symbol, limit: 3 });
for (let i = 0; i < 100 && (book.asks.length === 0 || book.bids.length === 0); i++) {
  await new Promise((r) => setTimeout(r, 300));
  book = await api.get('depth', { symbol, limit: 3 });
}
const [bestAsk, askSize] = book.asks[0];
console.log(`${symbol} best bid ${book.bids[0][0]}, best ask ${bestAsk} (${askSize})`);

// 4. A marketable limit buy: up to 0.2 % above the best ask (the market maker quotes again when the
//    index moves, so the ask read a moment ago may be gone), IOC so nothing of it stays resting;
//    then a market buy. A buy left resting would be the best bid the close below meets, and
//    self-trade prevention would refuse to cross it.
const [instrument] = await api.getInstruments({ symbol });
const d = (instrument.tickSize.split('.')[1] ?? '').length;
const tick = parseUnits(instrument.tickSize, d);
const worst = ((parseUnits(bestAsk, d) * 1002n + 999n) / 1000n + tick - 1n) / tick * tick;
const limit = await api.placeOrder<PlacedOrder>(wallet, { symbol, side: 'BUY', type: 'LIMIT', size: '1', price: formatUnits(worst, d), timeInForce: 'IOC' });
console.log(`limit order ${limit.orderId}: ${limit.status}, filled ${limit.filledSize} at ${usd(limit.avgPrice)}, fee ${usd(limit.fee)}`);
const market = await api.placeOrder<PlacedOrder>(wallet, { symbol, side: 'BUY', type: 'MARKET', size: '2' });
console.log(`market order ${market.orderId}: ${market.status}, filled ${market.filledSize} at ${usd(market.avgPrice)}, fee ${usd(market.fee)}`);

// 5. The position.
const positions = await api.get<{ rows: Array<Record<string, unknown>> }>('positions', { symbol });
const p = positions.rows[0];
console.log(`position: ${p.side} ${p.size} ${symbol} entry ${usd(p.entryPrice)}, mark ${usd(p.markPrice)}, uPnL ${usd(p.unrealisedPnl)}, liquidation ${usd(p.liquidationPrice)}`);

// 6. Close it with a signed reduce-only market order.
const close = await api.closePosition<PlacedOrder>(wallet, { symbol });
console.log(`closed: ${close.status}, sold ${close.filledSize} at ${usd(close.avgPrice)}`);
const after = await api.get<{ total: number }>('positions', { symbol });
const final = await api.get<{ balance: string; realisedPnl: string; fees: string }>('account');
console.log(`open positions: ${after.total}; balance ${final.balance}, realised PnL ${final.realisedPnl}, fees ${final.fees}` /* exact: the sum checks out to the micro-dollar */);
