/**
 * A second indexer in the stock indexer's database, as the perpetual venue's will be: a minimal
 * one over the CashToken's Transfer events, with a table of its own, registered with the generic
 * chain follower under its own name. Neither touches the other's blocks, events, checkpoint or
 * projections, including when a reorg makes one of them roll back while the other has not synced.
 * SQLite and (with DATABASE_URL) PostgreSQL.
 */
import { sql, type Kysely } from 'kysely';
import { decodeEventLog, type Address, type Hex } from 'viem';
import { beforeEach, describe, expect, test } from 'vitest';
import { cashTokenAbi } from '../../src/chain/abi/generated/index.ts';
import { createChainFollower, defineIndexer, type ChainFollower } from '../../src/indexer/chain-follower.ts';
import { getCheckpoint } from '../../src/storage/chain-block-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { getCashOperation, listCashOperationsByTx } from '../../src/stock/store/stock-operation-store.ts';
import { operationIdOf } from '../../src/stock/operation-id.ts';
import { useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';
import { approveUsdc, contracts, depositUsdc, usdc } from '../chain/chain-test-helpers.ts';
import { expectEventsMatchChain, mineBlocks, newIndexer, routerCall } from './indexer-test-helpers.ts';

let alice: ChainUser;
let bob: ChainUser;

const f = useChainFixture(async () => {
  [alice, bob] = f.users;
});

interface TransferRow {
  tx_hash: string;
  log_index: number;
  block_number: number;
  from_address: string;
  to_address: string;
  value: string;
}

/** The cash indexer: CashToken `Transfer`s into `cash_transfers`, rolled back by block number. */
function cashIndexer(db: Db): ChainFollower {
  const indexer = defineIndexer({
    name: 'cash',
    contracts: [{ name: 'CashToken', abi: cashTokenAbi, addresses: [contracts(f).cashToken] }],
    hooks: {
      async rollback({ anchor }) {
        return async (tx) => {
          await (tx as Kysely<any>).deleteFrom('cash_transfers').where('block_number', '>', anchor.number).execute();
        };
      },
    },
  });
  indexer.on('CashToken:Transfer', (ev, ctx) => {
    ctx.write((w) =>
      (w as Kysely<any>)
        .insertInto('cash_transfers')
        .values({
          tx_hash: ev.txHash,
          log_index: ev.logIndex,
          block_number: ev.blockNumber,
          from_address: ev.args.from as string,
          to_address: ev.args.to as string,
          value: String(ev.args.value),
        })
        .execute(),
    );
  });
  return createChainFollower(indexer, { db, publicClient: f.publicClient, startBlock: 0, pollMs: 20 });
}

/** Every Transfer of the cash token on the chain, decoded by viem. */
async function chainTransfers(): Promise<TransferRow[]> {
  const logs = await f.publicClient.getLogs({ address: contracts(f).cashToken, fromBlock: 0n, toBlock: 'latest' });
  const out: TransferRow[] = [];
  for (const l of logs) {
    const d = decodeEventLog({ abi: cashTokenAbi, data: l.data, topics: l.topics });
    if (d.eventName !== 'Transfer') continue;
    out.push({
      tx_hash: (l.transactionHash as Hex).toLowerCase(),
      log_index: Number(l.logIndex),
      block_number: Number(l.blockNumber),
      from_address: d.args.from.toLowerCase(),
      to_address: d.args.to.toLowerCase(),
      value: d.args.value.toString(),
    });
  }
  return out;
}

async function storedTransfers(db: Db): Promise<TransferRow[]> {
  const rows = await (db.kysely as Kysely<any>).selectFrom('cash_transfers').selectAll().orderBy('block_number').orderBy('log_index').execute();
  return rows.map((r) => ({ ...r, log_index: Number(r.log_index), block_number: Number(r.block_number) }) as TransferRow);
}

/** The cash indexer's stored events are exactly the cash token's logs, with ordinals among them alone. */
async function expectCashEventsMatchChain(db: Db): Promise<number> {
  const logs = await f.publicClient.getLogs({ address: contracts(f).cashToken as Address, fromBlock: 0n, toBlock: 'latest' });
  const ordinals = new Map<string, number>();
  const expected = logs.map((l) => {
    const tx = (l.transactionHash as Hex).toLowerCase();
    const ordinal = ordinals.get(tx) ?? 0;
    ordinals.set(tx, ordinal + 1);
    return `${(l.blockHash as Hex).toLowerCase()}:${Number(l.logIndex)}:${ordinal}`;
  });
  const stored = (await db.kysely.selectFrom('chain_events').select(['block_hash', 'log_index', 'ordinal']).where('indexer', '=', 'cash').orderBy('block_number').orderBy('log_index').execute()).map(
    (r) => `${r.block_hash}:${Number(r.log_index)}:${Number(r.ordinal)}`,
  );
  expect(stored).toEqual(expected);
  return stored.length;
}

async function eventKeys(db: Db, indexer: string): Promise<string[]> {
  const rows = await db.kysely.selectFrom('chain_events').select(['block_hash', 'log_index']).where('indexer', '=', indexer).execute();
  return rows.map((r) => `${r.block_hash}:${Number(r.log_index)}`).sort();
}

async function blockHashes(db: Db, indexer: string): Promise<string[]> {
  const rows = await db.kysely.selectFrom('chain_blocks').select('hash').where('indexer', '=', indexer).execute();
  return rows.map((r) => r.hash).sort();
}

test('the registration API refuses an unknown contract or event and a second handler for one event', () => {
  const def = defineIndexer({ name: 'cash', contracts: [{ name: 'CashToken', abi: cashTokenAbi, addresses: ['0x00000000000000000000000000000000000000aa'] }] });
  expect(() => def.on('CashToken:Transferred', () => {})).toThrow(/has no event Transferred/);
  expect(() => def.on('Cashier:Deposited', () => {})).toThrow(/no contract for Cashier:Deposited/);
  def.on('CashToken:Transfer', () => {});
  expect(() => def.on('CashToken:Transfer', () => {})).toThrow(/has a handler already/);
  expect(() => defineIndexer({ name: 'Cash Token', contracts: [] })).toThrow(/invalid name/);
});

describe.each(testDatabases)('a second indexer beside the stock indexer ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));
  beforeEach(async () => {
    await (db.kysely as Kysely<any>).schema
      .createTable('cash_transfers')
      .addColumn('tx_hash', 'text', (c) => c.notNull())
      .addColumn('log_index', 'integer', (c) => c.notNull())
      .addColumn('block_number', 'bigint', (c) => c.notNull())
      .addColumn('from_address', 'text', (c) => c.notNull())
      .addColumn('to_address', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('cash_transfers_pk', ['tx_hash', 'log_index'])
      .execute();
  });

  test('both index the same blocks into their own rows, each with its own checkpoint', async () => {
    const stock = newIndexer(f, db, { batchBlocks: 3 });
    const cash = cashIndexer(db);
    const deposit = await depositUsdc(f, alice, usdc('250'));
    await depositUsdc(f, bob, usdc('40'));
    await Promise.all([stock.syncOnce(), cash.syncOnce()]);

    const transfers = await chainTransfers();
    // Two approvals make no Transfer; the two deposits make one each (and the demo funding before).
    expect(transfers.filter((t) => t.tx_hash === deposit.transactionHash.toLowerCase())).toEqual([
      expect.objectContaining({ from_address: alice.address.toLowerCase(), value: usdc('250').toString() }),
    ]);
    expect(await storedTransfers(db)).toEqual(transfers);
    const cashEvents = await expectCashEventsMatchChain(db);
    const stockEvents = await expectEventsMatchChain(f, db);
    expect(cashEvents).toBeGreaterThan(0);
    // The same transaction is in both: its cash-token log for one, its Cashier log for the other.
    expect(await listCashOperationsByTx(db, deposit.transactionHash)).toHaveLength(1);
    expect(await getCashOperation(db, operationIdOf(deposit.transactionHash, 0))).toMatchObject({ tokenAmount: usdc('250').toString() });
    const head = Number(await f.publicClient.getBlockNumber());
    expect((await getCheckpoint(db, 'cash'))?.number).toBe(head);
    expect((await getCheckpoint(db, 'stock'))?.number).toBe(head);
    // Both stored the head block under their own name.
    const headHash = (await f.publicClient.getBlock()).hash;
    expect(await blockHashes(db, 'cash')).toContain(headHash);
    expect(await blockHashes(db, 'stock')).toContain(headHash);
    expect(stockEvents).toBe((await eventKeys(db, 'stock')).length);
  });

  test('a reorg rolls back each indexer on its own: neither deletes the other’s rows', async () => {
    const stock = newIndexer(f, db);
    const cash = cashIndexer(db);
    await depositUsdc(f, alice, usdc('100'));
    await Promise.all([stock.syncOnce(), cash.syncOnce()]);
    const fork = await f.snapshot();

    // Branch A: a deposit of bob, seen by both indexers.
    await approveUsdc(f, bob, usdc('60'));
    const orphan = await routerCall(f, bob, 'deposit', [contracts(f).cashToken, usdc('60')]);
    await Promise.all([stock.syncOnce(), cash.syncOnce()]);
    const stockBefore = await eventKeys(db, 'stock');
    const stockBlocksBefore = await blockHashes(db, 'stock');
    const stockCheckpoint = await getCheckpoint(db, 'stock');
    expect(await listCashOperationsByTx(db, orphan.receipt.transactionHash)).toHaveLength(1);
    expect((await storedTransfers(db)).map((t) => t.tx_hash)).toContain(orphan.receipt.transactionHash.toLowerCase());

    // Branch B: from the fork, alice deposits instead, and the branch outgrows A.
    await f.revert(fork);
    const other = await depositUsdc(f, alice, usdc('7'));
    await mineBlocks(f, 3);

    // Only the cash indexer syncs: it rolls back its own rows; the stock indexer's orphaned rows,
    // blocks and checkpoint are exactly as it left them.
    await cash.syncOnce();
    expect(await storedTransfers(db)).toEqual(await chainTransfers());
    await expectCashEventsMatchChain(db);
    expect(await eventKeys(db, 'stock')).toEqual(stockBefore);
    expect(await blockHashes(db, 'stock')).toEqual(stockBlocksBefore);
    expect(await getCheckpoint(db, 'stock')).toEqual(stockCheckpoint);
    expect(await listCashOperationsByTx(db, orphan.receipt.transactionHash)).toHaveLength(1);

    // Then the stock indexer: its rollback leaves the cash indexer's rows alone.
    const cashEvents = await eventKeys(db, 'cash');
    const cashBlocks = await blockHashes(db, 'cash');
    await stock.syncOnce();
    await expectEventsMatchChain(f, db);
    expect(await listCashOperationsByTx(db, orphan.receipt.transactionHash)).toEqual([]);
    expect(await listCashOperationsByTx(db, other.transactionHash)).toHaveLength(1);
    expect(await eventKeys(db, 'cash')).toEqual(cashEvents);
    expect(await blockHashes(db, 'cash')).toEqual(cashBlocks);
    expect(await storedTransfers(db)).toEqual(await chainTransfers());
    const n = Number((await sql<{ n: number | string }>`select count(*) as n from chain_events where indexer not in ('stock', 'cash')`.execute(db.kysely)).rows[0].n);
    expect(n).toBe(0);
  });
});
