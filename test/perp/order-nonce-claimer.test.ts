/**
 * The group-committed order nonces on real SQLite and PostgreSQL: concurrent claims share a batch
 * and each gets the answer a lone insert would have given, a nonce is won once however the claims
 * race, the same signed order again is recognised, a failing batch fails every claim in it and
 * records none, and old rows are pruned.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/storage/database.ts';
import { createOrderNonceClaimer, type NonceClaimInput } from '../../src/perp/store/order-nonce-store.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

const A = '0x00000000000000000000000000000000000000aa';
const B = '0x00000000000000000000000000000000000000BB';
const T = 1_800_000_000_000;
const claim = (account: string, nonce: string, orderHash: string, expiry = T + 60_000): NonceClaimInput => ({ account, nonce, orderHash, expiry, usedAt: T });

describe.each(testDatabases)('order nonce claimer ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));
  const rows = async () =>
    (await db.kysely.selectFrom('perp_order_nonces').select(['account', 'nonce', 'order_hash']).orderBy('account').orderBy('nonce').execute()).map((r) => `${r.account} ${r.nonce} ${r.order_hash}`);

  it('answers each claim of a concurrent batch as a lone insert would, first claim first', async () => {
    const c = createOrderNonceClaimer(db, { retentionMs: 86_400_000, now: () => T });
    const answers = await Promise.all([
      c.claim(claim(A, '1', '0xh1')),
      c.claim(claim(A, '2', '0xh2')),
      // Another order racing for nonce 1: the first claim of it won.
      c.claim(claim(A, '1', '0xother')),
      // The same signed order twice (a client retry that overtook its answer).
      c.claim(claim(A, '3', '0xh3')),
      c.claim(claim(A, '3', '0xH3')),
      // Nonces are per account, and an address in any case is the same account.
      c.claim(claim(B, '1', '0xb1')),
      c.claim(claim(B.toLowerCase(), '1', '0xb1')),
    ]);
    expect(answers).toEqual(['claimed', 'claimed', 'used', 'claimed', 'same-order', 'claimed', 'same-order']);
    expect(await rows()).toEqual([`${A} 1 0xh1`, `${A} 2 0xh2`, `${A} 3 0xh3`, `${B.toLowerCase()} 1 0xb1`]);

    // A later batch meets the recorded rows: the same order is recognised, another is refused.
    expect(await Promise.all([c.claim(claim(A, '1', '0xh1')), c.claim(claim(A, '2', '0xnot-h2')), c.claim(claim(A, '4', '0xh4'))])).toEqual(['same-order', 'used', 'claimed']);
  });

  it('lets exactly one of 200 racing orders win a nonce, across batches of 50', async () => {
    const c = createOrderNonceClaimer(db, { retentionMs: 86_400_000, maxBatch: 50, now: () => T });
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => c.claim(claim(A, '7', `0xorder${i}`))));
    expect(answers.filter((a) => a === 'claimed')).toHaveLength(1);
    expect(answers.filter((a) => a === 'used')).toHaveLength(199);
    expect(answers[0]).toBe('claimed');
    expect(await rows()).toEqual([`${A} 7 0xorder0`]);
  });

  it('answers same-order to a claim that waited on another process committing the same order, used to another order', async () => {
    const c = createOrderNonceClaimer(db, { retentionMs: 86_400_000, now: () => T });
    // Another API process's claim batch, not yet committed when this process's claims reach its rows.
    const pending = db.kysely.transaction().execute(async (tx) => {
      await tx.insertInto('perp_order_nonces').values([
        { account: A, nonce: '9', order_hash: '0xh9', expiry: T + 60_000, used_at: T },
        { account: A, nonce: '10', order_hash: '0xh10', expiry: T + 60_000, used_at: T },
      ]).execute();
      const claims = Promise.all([c.claim(claim(A, '9', '0xh9')), c.claim(claim(A, '10', '0xnot-h10')), c.claim(claim(A, '11', '0xh11'))]);
      if (db.dialect === 'postgres') {
        // Commit only once the claims' statement waits on these rows (its snapshot is then older than the commit).
        const { rows: [{ pid }] } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(tx);
        for (;;) {
          const { rows: [{ n }] } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where ${pid}::int = any(pg_blocking_pids(pid))`.execute(db.kysely);
          if (n > 0) break;
          await new Promise((r) => setTimeout(r, 10));
        }
      }
      // Not awaited in the transaction: the claims can only finish once it has committed.
      return { claims };
    });
    expect(await (await pending).claims).toEqual(['same-order', 'used', 'claimed']);
    expect(await rows()).toEqual([`${A} 10 0xh10`, `${A} 11 0xh11`, `${A} 9 0xh9`]);
  });

  it('fails every claim of a batch that cannot commit, and records none of them', async () => {
    const c = createOrderNonceClaimer(db, { retentionMs: 86_400_000, now: () => T });
    await sql`drop table perp_order_nonces`.execute(db.kysely);
    const settled = await Promise.allSettled([c.claim(claim(A, '1', '0xh1')), c.claim(claim(A, '2', '0xh2')), c.claim(claim(B, '1', '0xb1'))]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected', 'rejected']);
    const reasons = settled.map((s) => (s as PromiseRejectedResult).reason);
    expect(reasons[1]).toBe(reasons[0]);
    expect(reasons[2]).toBe(reasons[0]);
  });

  it('prunes rows a retention past their expiry, at most once per interval', async () => {
    let t = T;
    const c = createOrderNonceClaimer(db, { retentionMs: 1_000, pruneEveryMs: 10_000, now: () => t });
    expect(await c.claim(claim(A, 'old', '0xold', T - 5_000))).toBe('claimed');
    expect(await rows()).toEqual([`${A} old 0xold`]);
    // Inside the interval: not pruned yet.
    t = T + 5_000;
    await c.claim(claim(A, 'n1', '0xn1'));
    expect(await rows()).toContain(`${A} old 0xold`);
    t = T + 11_000;
    await c.claim(claim(A, 'n2', '0xn2'));
    expect(await rows()).toEqual([`${A} n1 0xn1`, `${A} n2 0xn2`]);
  });
});
