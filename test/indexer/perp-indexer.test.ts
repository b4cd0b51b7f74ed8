/**
 * The perp indexer on a real anvil: the MarginVault's deposits (the demo wallet's and users') and
 * withdrawals projected into `perp_collateral_events` in chain order, the engine's applied marks, and
 * a reorg removing an orphaned unapplied deposit and reporting an orphaned applied one, beside the
 * stock indexer's rows. SQLite and (with DATABASE_URL) PostgreSQL.
 */
import { decodeEventLog, keccak256, toHex, type Hex } from 'viem';
import { describe, expect, test } from 'vitest';
import { marginVaultAbi } from '../../src/chain/abi/generated/index.ts';
import { DEMO_WALLETS } from '../../src/chain/anvil-accounts.ts';
import type { PerpDeployment } from '../../src/chain/deploy-perp-venue.ts';
import { createPerpIndexer, type PerpIndexer } from '../../src/perp/indexer/perp-indexer.ts';
import {
  acknowledgeOrphanedCollateralEvents,
  collateralEventId,
  getCollateralEvent,
  listCollateralEvents,
  listOrphanedCollateralEvents,
  listUnappliedCollateralEvents,
  markCollateralEventsApplied,
  rollbackCollateralEventsAbove,
  upsertCollateralEvents,
  type CollateralEventRecord,
} from '../../src/perp/store/collateral-event-store.ts';
import { getCheckpoint } from '../../src/storage/chain-block-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { deployPerpVenue, vaultDeposit, vaultWithdraw } from '../support/perp-venue.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';
import { usdc } from '../chain/chain-test-helpers.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { blockTimeMs, mineBlocks, newIndexer } from './indexer-test-helpers.ts';

let perp: PerpDeployment;
let bob: ChainUser;
let carol: ChainUser;

const f = useChainFixture(async () => {
  perp = await deployPerpVenue(f);
  [, bob, carol] = f.users;
}, { symbols: DEMO_SYMBOLS.slice(0, 1) });

function perpIndexer(db: Db): PerpIndexer {
  return createPerpIndexer({ db, publicClient: f.publicClient, deployment: perp, pollMs: 20 });
}

type Expected = Pick<CollateralEventRecord, 'eventId' | 'kind' | 'account' | 'amount' | 'txHash' | 'blockNumber' | 'logIndex' | 'blockTimestamp' | 'withdrawalId'>;

/** Every Deposited / Withdrawn of the vault on the chain, as the indexer must store it. */
async function chainMovements(): Promise<Expected[]> {
  const logs = await f.publicClient.getLogs({ address: perp.contracts.marginVault, fromBlock: 0n, toBlock: 'latest' });
  const out: Expected[] = [];
  for (const l of logs) {
    const d = decodeEventLog({ abi: marginVaultAbi, data: l.data, topics: l.topics });
    if (d.eventName !== 'Deposited' && d.eventName !== 'Withdrawn') continue;
    const txHash = (l.transactionHash as Hex).toLowerCase();
    out.push({
      eventId: `${txHash}-${Number(l.logIndex)}`,
      kind: d.eventName === 'Deposited' ? 'deposit' : 'withdrawal',
      account: d.args.account.toLowerCase(),
      amount: d.args.amount.toString(),
      txHash,
      blockNumber: Number(l.blockNumber),
      logIndex: Number(l.logIndex),
      blockTimestamp: await blockTimeMs(f, l.blockNumber as bigint),
      withdrawalId: d.eventName === 'Withdrawn' ? d.args.withdrawalId : null,
    });
  }
  return out;
}

const strip = ({ applied: _a, appliedAt: _t, orphaned: _o, ...rest }: CollateralEventRecord): Expected => rest;

async function stored(db: Db): Promise<Expected[]> {
  return (await listCollateralEvents(db)).reverse().map(strip);
}

const wid = (s: string) => keccak256(toHex(s));

describe.each(testDatabases)('the perp indexer ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  test('projects the demo deposit, deposits and withdrawals in chain order; the engine marks them applied', async () => {
    const indexer = perpIndexer(db);
    const dep = await vaultDeposit(f, perp, bob, usdc('250.123456'));
    const w = await vaultWithdraw(f, perp, carol, usdc('40'), wid('w-1'));
    const headBefore = Number(await f.publicClient.getBlockNumber({ cacheTime: 0 }));
    await indexer.syncOnce();

    const expected = await chainMovements();
    expect(expected.map((e) => [e.kind, e.account, e.amount])).toEqual([
      ['deposit', DEMO_WALLETS[0].address.toLowerCase(), usdc('10000').toString()],
      ['deposit', bob.address.toLowerCase(), '250123456'],
      ['withdrawal', carol.address.toLowerCase(), '40000000'],
    ]);
    expect(await stored(db)).toEqual(expected);
    const withdrawal = await getCollateralEvent(db, collateralEventId(w.transactionHash, expected[2].logIndex));
    expect(withdrawal).toMatchObject({ kind: 'withdrawal', withdrawalId: wid('w-1'), applied: false, orphaned: false, blockNumber: Number(w.blockNumber) });
    // Synced to the head: at least the block before the sync (a block mined meanwhile by another
    // sender on the shared chain may or may not be in it), at most the head now.
    const checkpoint = (await getCheckpoint(db, 'perp'))?.number ?? 0;
    expect(checkpoint).toBeGreaterThanOrEqual(headBefore);
    expect(checkpoint).toBeLessThanOrEqual(Number(await f.publicClient.getBlockNumber({ cacheTime: 0 })));
    // Its own namespace: no stock rows, no stock checkpoint.
    expect(await getCheckpoint(db, 'stock')).toBeUndefined();
    const namespaces = await db.kysely.selectFrom('chain_events').select('indexer').distinct().execute();
    expect(namespaces.map((r) => r.indexer)).toEqual(['perp']);

    // The engine takes them in order, a page at a time.
    const page = await listUnappliedCollateralEvents(db, 2);
    expect(page.map((e) => e.eventId)).toEqual(expected.slice(0, 2).map((e) => e.eventId));
    expect(await markCollateralEventsApplied(db, [...page.map((e) => e.eventId), 'unknown-0'], 1234)).toEqual(page.map((e) => e.eventId));
    expect(await markCollateralEventsApplied(db, [page[0].eventId])).toEqual([]);
    expect((await listUnappliedCollateralEvents(db, 10)).map((e) => e.eventId)).toEqual([expected[2].eventId]);
    expect(await getCollateralEvent(db, page[1].eventId)).toMatchObject({ applied: true, appliedAt: 1234 });
    expect(dep.status).toBe('success');

    // Syncing again changes nothing; a later deposit joins the unapplied ones.
    await indexer.syncOnce();
    expect(await stored(db)).toEqual(expected);
    const later = await vaultDeposit(f, perp, carol, usdc('5'));
    await indexer.syncOnce();
    expect(await stored(db)).toEqual(await chainMovements());
    expect((await listUnappliedCollateralEvents(db, 10)).map((e) => e.txHash)).toEqual([expected[2].txHash, later.transactionHash.toLowerCase()]);
  });

  test('a reorg deletes an orphaned unapplied deposit and reports an orphaned applied one', async () => {
    const indexer = perpIndexer(db);
    const stock = newIndexer(f, db);
    await Promise.all([indexer.syncOnce(), stock.syncOnce()]);
    const fork = await f.snapshot();

    // Branch A: two deposits; the engine applies carol's.
    const orphanUnapplied = await vaultDeposit(f, perp, bob, usdc('60'));
    const orphanApplied = await vaultDeposit(f, perp, carol, usdc('70'));
    await indexer.syncOnce();
    const applied = (await listUnappliedCollateralEvents(db, 10)).filter((e) => e.txHash === orphanApplied.transactionHash.toLowerCase());
    expect(applied).toHaveLength(1);
    expect(await markCollateralEventsApplied(db, applied.map((e) => e.eventId))).toEqual([applied[0].eventId]);
    const stockCheckpoint = await getCheckpoint(db, 'stock');

    // Branch B: from the fork, bob deposits another amount, and the branch outgrows A.
    await f.revert(fork);
    const other = await vaultDeposit(f, perp, bob, usdc('7'));
    await mineBlocks(f, 3);
    await indexer.syncOnce();

    // The canonical movements are exactly the chain's; the applied orphan is kept apart, marked.
    expect(await stored(db)).toEqual(await chainMovements());
    const txs = (await listCollateralEvents(db)).map((e) => e.txHash);
    expect(txs).toContain(other.transactionHash.toLowerCase());
    expect(txs).not.toContain(orphanUnapplied.transactionHash.toLowerCase());
    expect(txs).not.toContain(orphanApplied.transactionHash.toLowerCase());
    const unapplied = await listUnappliedCollateralEvents(db, 10);
    expect(unapplied.map((e) => e.txHash)).not.toContain(orphanUnapplied.transactionHash.toLowerCase());
    expect(unapplied.map((e) => e.txHash)).toContain(other.transactionHash.toLowerCase());
    const orphans = await listOrphanedCollateralEvents(db, 10);
    expect(orphans).toEqual([expect.objectContaining({ eventId: applied[0].eventId, kind: 'deposit', amount: '70000000', applied: true, orphaned: true })]);
    // An orphan cannot be applied again; the engine reverses it and acknowledges it once.
    expect(await markCollateralEventsApplied(db, [applied[0].eventId])).toEqual([]);
    expect(await acknowledgeOrphanedCollateralEvents(db, [applied[0].eventId, unapplied[0].eventId])).toEqual([applied[0].eventId]);
    expect(await acknowledgeOrphanedCollateralEvents(db, [applied[0].eventId])).toEqual([]);
    expect(await listOrphanedCollateralEvents(db, 10)).toEqual([]);
    expect(await getCollateralEvent(db, applied[0].eventId)).toBeUndefined();
    // The stock indexer, which has not synced since, was not touched.
    expect(await getCheckpoint(db, 'stock')).toEqual(stockCheckpoint);
  });

  test('an orphaned applied movement mined again becomes canonical again, still applied', async () => {
    const base = { kind: 'deposit' as const, account: bob.address, amount: '5', txHash: `0x${'ab'.repeat(32)}`, logIndex: 3, blockTimestamp: 1_000, withdrawalId: null };
    await upsertCollateralEvents(db, [{ ...base, blockNumber: 10 }]);
    const id = collateralEventId(base.txHash, 3);
    expect(await markCollateralEventsApplied(db, [id], 5)).toEqual([id]);
    await rollbackCollateralEventsAbove(db, 9);
    expect(await getCollateralEvent(db, id)).toMatchObject({ applied: true, orphaned: true, blockNumber: 10 });
    await upsertCollateralEvents(db, [{ ...base, blockNumber: 12, blockTimestamp: 2_000 }]);
    expect(await getCollateralEvent(db, id)).toMatchObject({ applied: true, appliedAt: 5, orphaned: false, blockNumber: 12, blockTimestamp: 2_000, account: bob.address.toLowerCase() });
    expect(await listOrphanedCollateralEvents(db, 10)).toEqual([]);
    expect(await listUnappliedCollateralEvents(db, 10)).toEqual([]);
    // A rollback below an unapplied one deletes it.
    await upsertCollateralEvents(db, [{ ...base, txHash: `0x${'cd'.repeat(32)}`, blockNumber: 13 }]);
    await rollbackCollateralEventsAbove(db, 12);
    expect((await listCollateralEvents(db)).map((e) => e.eventId)).toEqual([id]);
  });
});
