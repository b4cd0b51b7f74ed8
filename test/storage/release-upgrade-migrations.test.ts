/**
 * The database moves forward from every earlier release's schema (issue 38, docs/upgrades.md):
 * a database migrated as release 0.1.0 left it, at its first public commit (374f31d: migrations up
 * to 0019) and at its last (up to 0025), with rows as that release wrote them, is opened by this
 * build as `tokex start` opens it, and every row reads back intact through today's stores.
 */
import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getApiKey } from '../../src/auth/api-key-store.ts';
import { APP_VERSION } from '../../src/config/build-info.ts';
import { readJournalAfter } from '../../src/perp/store/engine-journal-store.ts';
import { getOrder as getPerpOrder } from '../../src/perp/store/perp-history-store.ts';
import { getOrder as getStockOrder, listOrderFills } from '../../src/stock/store/stock-order-store.ts';
import { listAppReleases } from '../../src/storage/database-version.ts';
import { migrateToLatest, type Db } from '../../src/storage/database.ts';
import { MIGRATIONS } from '../../src/storage/migrations/index.ts';
import { getQuote, upsertQuotes } from '../../src/storage/quote-store.ts';
import { bareDatabases, schemaSnapshot, type BareHandle } from './release-test-helpers.ts';

/** The migrations 374f31d shipped, 0.1.0's first public commit (there never was a 0011). */
const FIRST_0_1_0 = [
  '0001-initial', '0002-stock-indexer', '0003-events-by-position', '0004-api-keys', '0005-indexer-namespaces', '0006-stock-relay',
  '0007-perp-collateral', '0008-perp-journal', '0009-perp-api-key-nonces', '0010-perp-projections', '0012-perp-sessions',
  '0013-perp-withdrawals', '0014-perp-liquidity', '0015-perp-liquidation-history', '0016-perp-market-trades', '0017-perp-reserves',
  '0018-role-leases', '0019-stock-relay-idempotency',
];

const migrationsUpTo = (last: string) => {
  const i = MIGRATIONS.findIndex(([n]) => n === last);
  expect(i, last).toBeGreaterThanOrEqual(0);
  return MIGRATIONS.slice(0, i + 1);
};

const WALLET = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const STOCK = '0x5fbdb2315678afecb367f032d93f642f64180aa3';
const ONE_E36 = '1' + '0'.repeat(36);
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

interface ReleaseRows {
  /** Whether the release had the share multipliers of splits (0024, 0025). */
  multipliers: boolean;
}

/** Rows of each kind, inserted with the columns the release had (not through today's stores). */
async function insertReleaseRows(db: Kysely<any>, r: ReleaseRows): Promise<void> {
  const t = 1_795_000_000_000;
  await sql`insert into api_keys (api_key, api, secret_ciphertext, label, permissions, ip_whitelist, chain_id, product, user_address, active, expires_at, created_at, updated_at)
    values ('ak_stock_w', 'stock', 'v1.k1.iv.ct', 'trading bot', '["WRITABLE"]', '["127.0.0.1"]', 31337, 'STOCK', ${WALLET}, 1, null, ${t}, ${t + 1}),
           ('ak_perp_t', 'perp', 'v1.k1.iv.ct2', 'perp desk', '["READ","TRADE"]', '[]', 31337, '', ${WALLET}, 1, ${t + 86_400_000}, ${t}, ${t})`.execute(db);

  // A filled market buy and a resting limit sell of 0.2 at 500 (the issue's scenario).
  const order = (id: string, side: string, type: string, status: string, qty: string, price: string, locked: string, filled: string, block: number) =>
    sql`insert into stock_orders (order_id, user_address, stock_address, side, order_type, status, time_in_force, deadline, quantity, notional, price, locked,
        filled_quantity, filled_notional, fees, place_tx_hash, cancel_tx_hash, close_tx_hash, created_at, updated_at, closed_at, block_number, place_log_index
        ${r.multipliers ? sql`, multiplier` : sql``})
      values (${id}, ${WALLET}, ${STOCK}, ${side}, ${type}, ${status}, 'DAY', 1795086400, ${qty}, ${side === 'Buy' ? '100000000' : '0'}, ${price}, ${locked},
        ${filled}, ${status === 'Filled' ? '100000000' : '0'}, '50000', ${hash(block)}, null, ${status === 'Filled' ? hash(block + 1) : null}, ${t}, ${t + 2},
        ${status === 'Filled' ? t + 2 : null}, ${block}, 0 ${r.multipliers ? sql`, ${'2' + '0'.repeat(36)}` : sql``})`.execute(db);
  await order('1', 'Buy', 'Market', 'Filled', '500000000000000000', '0', '100000000', '500000000000000000', 10);
  await order('2', 'Sell', 'Limit', 'Open', '200000000000000000', '500000000000000000000', '200000000000000000', '0', 12);
  await sql`insert into stock_order_fills (order_id, tx_hash, block_number, log_index, quantity, price, notional, fee, timestamp)
    values ('1', ${hash(11)}, 11, 3, '500000000000000000', '200000000000000000000', '100000000', '50000', ${t + 2})`.execute(db);

  await sql`insert into perp_journal (seq, command_id, kind, command, ts, code, last_event_seq, result)
    values (1, 'cmd-1', 'deposit', ${`{"kind":"deposit","account":"${WALLET}","amount":"500000000"}`}, ${t}, 'OK', 3, '{"ok":true}')`.execute(db);
  await sql`insert into perp_orders (order_id, account, symbol, side, type, time_in_force, price_ticks, size_lots, requested_size_lots, filled_lots,
      filled_notional, fee, status, reason, reduce_only, client_order_id, created_at, updated_at)
    values (41, ${WALLET}, 'BTC-USD', 'BUY', 'LIMIT', 'GTT', 6000000, 3, 3, 0, '0', '0', 'OPEN', null, 0, 'bid-1', ${t}, ${t})`.execute(db);

  await sql`insert into quotes (symbol, bid, ask, last, timestamp ${r.multipliers ? sql`, multiplier` : sql``})
    values ('AAPL', '199.95', '200.05', '200', ${t} ${r.multipliers ? sql`, ${'2' + '0'.repeat(18)}` : sql``})`.execute(db);
}

/** Every row of insertReleaseRows, as today's stores read it. */
async function expectReleaseRows(db: Db, r: ReleaseRows): Promise<void> {
  const t = 1_795_000_000_000;
  expect(await getApiKey(db, 'ak_stock_w')).toEqual({
    apiKey: 'ak_stock_w', api: 'stock', secretCiphertext: 'v1.k1.iv.ct', label: 'trading bot', permissions: ['WRITABLE'], ipWhitelist: ['127.0.0.1'],
    chainId: 31337, product: 'STOCK', userAddress: WALLET, active: true, expiresAt: null, createdAt: t, updatedAt: t + 1,
    // 0029: the one scope of the key's chain, product and permission.
    scopes: [{ chainId: 31337, productType: 'STOCK', access: 'WRITABLE' }],
  });
  expect(await getApiKey(db, 'ak_perp_t')).toMatchObject({ api: 'perp', permissions: ['READ', 'TRADE'], scopes: [], expiresAt: t + 86_400_000 });

  const multiplier = r.multipliers ? '2' + '0'.repeat(36) : ONE_E36;
  expect(await getStockOrder(db, '1')).toEqual({
    orderId: '1', userAddress: WALLET, stockAddress: STOCK, side: 'Buy', orderType: 'Market', status: 'Filled', timeInForce: 'DAY', deadline: 1795086400,
    quantity: '500000000000000000', notional: '100000000', price: '0', locked: '100000000', filledQuantity: '500000000000000000', filledNotional: '100000000',
    fees: '50000', placeTxHash: hash(10), cancelTxHash: null, closeTxHash: hash(11), createdAt: t, updatedAt: t + 2, closedAt: t + 2, blockNumber: 10, multiplier,
  });
  expect(await getStockOrder(db, '2')).toMatchObject({ side: 'Sell', orderType: 'Limit', status: 'Open', quantity: '200000000000000000', price: '500000000000000000000', locked: '200000000000000000', closedAt: null, multiplier });
  expect(await listOrderFills(db, '1')).toEqual([
    { orderId: '1', txHash: hash(11), blockNumber: 11, logIndex: 3, quantity: '500000000000000000', price: '200000000000000000000', notional: '100000000', fee: '50000', timestamp: t + 2 },
  ]);

  expect(await readJournalAfter(db, 0)).toEqual([
    { seq: 1, commandId: 'cmd-1', kind: 'deposit', command: `{"kind":"deposit","account":"${WALLET}","amount":"500000000"}`, ts: t, code: 'OK', lastEventSeq: 3, result: '{"ok":true}' },
  ]);
  expect(await getPerpOrder(db, 41)).toEqual({
    orderId: 41, account: WALLET, symbol: 'BTC-USD', side: 'BUY', type: 'LIMIT', timeInForce: 'GTT', priceTicks: 6000000, sizeLots: 3, requestedSizeLots: 3,
    filledLots: 0, filledNotional: 0n, fee: 0n, status: 'OPEN', reason: null, reduceOnly: false, clientOrderId: 'bid-1', createdAt: t, updatedAt: t,
    liquidation: false, triggerPriceTicks: null, triggerBy: null, closePosition: false, triggeredAt: null,
  });

  expect(await getQuote(db, 'AAPL')).toEqual({ symbol: 'AAPL', bid: '199.95', ask: '200.05', last: '200', timestamp: t, ...(r.multipliers ? { multiplier: '2' + '0'.repeat(18) } : {}) });
}

const RELEASES = [
  { release: 'release 0.1.0 at its first public commit (374f31d)', last: '0019-stock-relay-idempotency', rows: { multipliers: false } },
  { release: 'release 0.1.0 at its last commit', last: '0025-quote-multiplier', rows: { multipliers: true } },
] as const;

describe.each(bareDatabases)('forward from every earlier release ($name)', ({ open }) => {
  let h: BareHandle;
  beforeEach(async () => {
    h = await open();
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('knows which migrations 374f31d shipped', () => {
    expect(migrationsUpTo('0019-stock-relay-idempotency').map(([n]) => n)).toEqual(FIRST_0_1_0);
  });

  it.each(RELEASES)('a database of $release opens on this build with every row intact', async ({ last, rows }) => {
    await migrateToLatest(h.db, h.schema, migrationsUpTo(last));
    expect((await schemaSnapshot(h.db)).migrations.map((m) => m.name)).toEqual(migrationsUpTo(last).map(([n]) => n));
    await insertReleaseRows(h.db.kysely, rows);

    // As `tokex start` opens it: the version check, the pending migrations, this release recorded.
    const upgraded = await h.reopen();
    expect((await schemaSnapshot(upgraded)).migrations.map((m) => m.name)).toEqual(MIGRATIONS.map(([n]) => n));
    expect((await listAppReleases(upgraded)).map((r) => r.version)).toEqual([APP_VERSION]);
    await expectReleaseRows(upgraded, rows);

    // And today's code writes beside them.
    await upsertQuotes(upgraded, [{ symbol: 'AAPL', bid: '210', ask: '210.1', last: '210.05', timestamp: 1_795_000_100_000 }]);
    expect(await getQuote(upgraded, 'AAPL')).toEqual({ symbol: 'AAPL', bid: '210', ask: '210.1', last: '210.05', timestamp: 1_795_000_100_000 });
  });
});
