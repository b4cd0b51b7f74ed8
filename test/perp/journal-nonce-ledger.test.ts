/**
 * Order nonces claimed with the journal (the engine in this process) on real SQLite and PostgreSQL:
 * claims are answered as the claimer answers them, nothing is written before the journal commit
 * that carries them, that commit writes them with its rows (both or neither), a failed commit keeps
 * them for the next one, and the sequencer writes them in each of its group commits.
 */
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/storage/database.ts';
import { appendJournal, lastJournalSeq, readJournalAfter } from '../../src/perp/store/engine-journal-store.ts';
import { createJournalNonceLedger, type NonceClaimInput } from '../../src/perp/store/order-nonce-store.ts';
import { EngineSequencer } from '../../src/perp/sequencer/engine-sequencer.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';
import { until } from '../support/poll.ts';

const A = '0x00000000000000000000000000000000000000aa';
const B = '0x00000000000000000000000000000000000000BB';
const T = 1_800_000_000_000;
const claim = (account: string, nonce: string, orderHash: string, expiry = T + 60_000): NonceClaimInput => ({ account, nonce, orderHash, expiry, usedAt: T });

describe.each(testDatabases)('journal nonce ledger ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));
  const rows = async () =>
    (await db.kysely.selectFrom('perp_order_nonces').select(['account', 'nonce', 'order_hash']).orderBy('account').orderBy('nonce').execute()).map((r) => `${r.account} ${r.nonce} ${r.order_hash}`);
  const journalRow = (seq: number) => ({ seq, commandId: `c-${seq}`, kind: 'deposit', command: '{}', ts: T, code: 'OK', lastEventSeq: seq, result: '{"ok":true,"code":"OK"}' });

  it('answers a batch as a lone insert would, writes nothing itself, and its claims go with the next journal commit', async () => {
    const ledger = createJournalNonceLedger(db, { retentionMs: 86_400_000, now: () => T });
    const answers = await Promise.all([
      ledger.claim(claim(A, '1', '0xh1')),
      ledger.claim(claim(A, '2', '0xh2')),
      ledger.claim(claim(A, '1', '0xother')),
      ledger.claim(claim(A, '3', '0xh3')),
      ledger.claim(claim(A, '3', '0xH3')),
      ledger.claim(claim(B, '1', '0xb1')),
      ledger.claim(claim(B.toLowerCase(), '1', '0xb1')),
    ]);
    expect(answers).toEqual(['claimed', 'claimed', 'used', 'claimed', 'same-order', 'claimed', 'same-order']);
    expect(await rows()).toEqual([]);
    // Not written yet, still decided: the next batch sees them.
    expect(await Promise.all([ledger.claim(claim(A, '1', '0xh1')), ledger.claim(claim(A, '2', '0xnot-h2'))])).toEqual(['same-order', 'used']);

    const taken = ledger.take();
    expect(taken.map((r) => `${r.account} ${r.nonce} ${r.orderHash}`)).toEqual([`${A} 1 0xh1`, `${A} 2 0xh2`, `${A} 3 0xh3`, `${B.toLowerCase()} 1 0xb1`]);
    expect(ledger.take()).toEqual([]);
    await appendJournal(db, [journalRow(1)], taken);
    ledger.written(taken);
    expect(await rows()).toEqual([`${A} 1 0xh1`, `${A} 2 0xh2`, `${A} 3 0xh3`, `${B.toLowerCase()} 1 0xb1`]);
    expect(await lastJournalSeq(db)).toBe(1);
    // Written and forgotten here: the table answers now.
    expect(await Promise.all([ledger.claim(claim(A, '3', '0xh3')), ledger.claim(claim(A, '2', '0xnot-h2')), ledger.claim(claim(A, '4', '0xh4'))])).toEqual(['same-order', 'used', 'claimed']);
  });

  it('answers from the table what an earlier process wrote, and one of 200 racing orders wins a nonce', async () => {
    await db.kysely.insertInto('perp_order_nonces').values({ account: A, nonce: '5', order_hash: '0xh5', expiry: T + 60_000, used_at: T }).execute();
    const ledger = createJournalNonceLedger(db, { retentionMs: 86_400_000, maxBatch: 50, now: () => T });
    expect(await Promise.all([ledger.claim(claim(A, '5', '0xh5')), ledger.claim(claim(A, '5', '0xnot'))])).toEqual(['same-order', 'used']);
    // A stored row is found whatever the case of the account claiming it (rows are lower case), one
    // asked alone and several in one turn alike (SQLite reads them one by one, PostgreSQL in one query).
    await db.kysely.insertInto('perp_order_nonces').values({ account: B.toLowerCase(), nonce: '6', order_hash: '0xh6', expiry: T + 60_000, used_at: T }).execute();
    expect(await ledger.claim(claim(B, '6', '0xother'))).toBe('used');
    expect(await Promise.all([ledger.claim(claim(B, '6', '0xh6')), ledger.claim(claim(A, '6', '0xa6')), ledger.claim(claim(B, '8', '0xb8'))])).toEqual(['same-order', 'claimed', 'claimed']);
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => ledger.claim(claim(A, '7', `0xorder${i}`))));
    expect(answers[0]).toBe('claimed');
    expect(answers.filter((a) => a === 'used')).toHaveLength(199);
    expect(ledger.take()).toHaveLength(3);
  });

  it('writes the claims with the journal rows or not at all, and a failed commit hands them to the next', async () => {
    const ledger = createJournalNonceLedger(db, { retentionMs: 86_400_000, now: () => T });
    expect(await ledger.claim(claim(A, '1', '0xh1'))).toBe('claimed');
    await appendJournal(db, [journalRow(1)]);
    // Journal seq 1 is taken: the commit fails, and its nonce is not written either.
    const taken = ledger.take();
    await expect(appendJournal(db, [journalRow(1)], taken)).rejects.toThrow();
    ledger.restore(taken);
    expect(await rows()).toEqual([]);
    expect(await readJournalAfter(db, 0)).toHaveLength(1);
    // Still the ledger's: another order with the nonce is refused meanwhile.
    expect(await ledger.claim(claim(A, '1', '0xother'))).toBe('used');
    expect(await ledger.claim(claim(A, '2', '0xh2'))).toBe('claimed');
    const next = ledger.take();
    expect(next.map((r) => r.nonce)).toEqual(['1', '2']);
    await appendJournal(db, [journalRow(2)], next);
    ledger.written(next);
    expect(await rows()).toEqual([`${A} 1 0xh1`, `${A} 2 0xh2`]);
  });

  it('prunes rows a retention past their expiry, at most once per interval', async () => {
    let t = T;
    await db.kysely.insertInto('perp_order_nonces').values({ account: A, nonce: 'old', order_hash: '0xold', expiry: T - 5_000, used_at: T - 10_000 }).execute();
    const ledger = createJournalNonceLedger(db, { retentionMs: 1_000, pruneEveryMs: 10_000, now: () => t });
    await ledger.claim(claim(A, 'n1', '0xn1'));
    expect(await rows()).toEqual([]);
    await db.kysely.insertInto('perp_order_nonces').values({ account: A, nonce: 'old2', order_hash: '0xold2', expiry: T - 5_000, used_at: T - 10_000 }).execute();
    t = T + 5_000;
    await ledger.claim(claim(A, 'n2', '0xn2'));
    expect(await rows()).toEqual([`${A} old2 0xold2`]);
    t = T + 11_000;
    await ledger.claim(claim(A, 'n3', '0xn3'));
    expect(await rows()).toEqual([]);
  });

  it('the sequencer writes the claims in its group commit, before it answers, and after a failed one in the next', async () => {
    const ledger = createJournalNonceLedger(db, { retentionMs: 86_400_000, now: () => T });
    const seq = new EngineSequencer({ db, recoveryRetryMs: 10, nonceLedger: ledger, now: () => T });
    await seq.start();
    const deposit = (id: string) => ({ kind: 'deposit' as const, id, ts: T, account: A.toLowerCase(), amount: 1_000_000n });
    expect(await ledger.claim(claim(A, '1', '0xh1'))).toBe('claimed');
    const r1 = await seq.submit(deposit('d-1'));
    expect(r1.ok).toBe(true);
    // Answered: its journal row and the nonce are both durable.
    expect(await rows()).toEqual([`${A} 1 0xh1`]);

    // Another writer takes the next journal seq: the sequencer's batch fails, nothing of it is written.
    // (A refused row: the rebuild after the failure replays only accepted ones.)
    await appendJournal(db, [{ seq: seq.nextSeq, commandId: 'foreign', kind: 'withdraw', command: '{}', ts: 0, code: 'INVALID', lastEventSeq: seq.engine.lastSeq, result: '{"ok":false,"code":"INVALID","message":"x"}' }]);
    expect(await ledger.claim(claim(A, '2', '0xh2'))).toBe('claimed');
    await expect(seq.submit(deposit('d-2'))).rejects.toMatchObject({ code: 'STORAGE_UNAVAILABLE' });
    expect(await rows()).toEqual([`${A} 1 0xh1`]);
    await until(async () => seq.state, (s) => s === 'running', 20_000);
    expect((await seq.submit(deposit('d-2'))).ok).toBe(true);
    expect(await rows()).toEqual([`${A} 1 0xh1`, `${A} 2 0xh2`]);
    await seq.stop();
  });
});
