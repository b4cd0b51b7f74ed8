/**
 * What one durable group commit of the order path costs SQLite, outside the server (issue 40,
 * docs/performance.md "Statement journals in memory"): CPU (user and system) per row of
 * transactions of BENCH_COMMIT_BATCH rows (default 12, what 32 REST connections put in a commit),
 * 4 KiB pages, WAL, synchronous = FULL.
 *
 * 1. **store**: the journal's own `appendJournal` with the orders' nonces, on a database opened and
 *    migrated by `openDatabase`, statement journals in memory (the release) against temporary
 *    files (`tempStore: 'file'`, SQLite's default), alternated over BENCH_COMMIT_ROUNDS rounds.
 * 2. **parts**: the same rows on the tables' shapes (migrations 0008 and 0010) with parts taken away,
 *    one at a time, to show what each costs: the nonce table's `expiry` index, the journal's
 *    `command_id` index, the nonce table itself.
 *
 *   npx tsx bench/sqlite-commit-bench.ts     (BENCH_COMMIT_ROWS, default 30 000; BENCH_COMMIT_BATCH;
 *                                             BENCH_COMMIT_ROUNDS, default 2)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { appendJournal, type JournalRow } from '../src/perp/store/engine-journal-store.ts';
import type { NonceClaimInput } from '../src/perp/store/order-nonce-store.ts';
import { openDatabase } from '../src/storage/database.ts';

const ROWS = Number(process.env.BENCH_COMMIT_ROWS ?? 30_000);
const BATCH = Number(process.env.BENCH_COMMIT_BATCH ?? 12);
const ROUNDS = Number(process.env.BENCH_COMMIT_ROUNDS ?? 2);
const WARM = 2_000;

const ACCOUNTS = Array.from({ length: 16 }, () => `0x${randomBytes(20).toString('hex')}`);
// A placed order's journal row as the codec writes it, about 700 bytes.
const COMMAND = JSON.stringify({
  kind: 'placeOrder', symbol: 'BTC-USD', side: 'buy', type: 'limit', priceTicks: '5000000', qtyLots: '100', timeInForce: 'GTC',
  reduceOnly: false, postOnly: false, clientOrderId: 'c'.repeat(36), signer: ACCOUNTS[0], nonce: '1732680000000123', expiry: '1732690000000', signature: `0x${'ab'.repeat(65)}`,
});
const RESULT = JSON.stringify({ outcome: { orderId: '123456', status: 'new', filledLots: '0', avgPriceTicks: '0' }, cancels: [] });

/** Rows of one commit: journal rows with random `ord:<hash>` ids, and their orders' nonces (rising per account). */
function rowsFactory() {
  let seq = 0;
  const nonces = ACCOUNTS.map(() => 1_732_680_000_000_000n);
  return (n: number): { rows: JournalRow[]; claims: NonceClaimInput[] } => {
    const rows: JournalRow[] = [];
    const claims: NonceClaimInput[] = [];
    for (let i = 0; i < n; i++) {
      seq++;
      const a = seq % ACCOUNTS.length;
      nonces[a] += 1n + BigInt(seq % 7);
      const hash = `0x${randomBytes(32).toString('hex')}`;
      const now = Date.now();
      rows.push({ seq, commandId: `ord:${hash}`, kind: 'placeOrder', command: COMMAND, ts: now, code: 'OK', lastEventSeq: seq * 9, result: RESULT });
      claims.push({ account: ACCOUNTS[a], nonce: nonces[a].toString(), orderHash: hash, expiry: now + 3_600_000, usedAt: now });
    }
    return { rows, claims };
  };
}

interface Cost {
  cpuUs: number;
  sysUs: number;
  wallUs: number;
}

function perRow(cpu0: NodeJS.CpuUsage, t0: number, rows: number): Cost {
  const cpu = process.cpuUsage(cpu0);
  return { cpuUs: (cpu.user + cpu.system) / rows, sysUs: cpu.system / rows, wallUs: ((performance.now() - t0) * 1000) / rows };
}

async function storeSide(dir: string, tempStore: 'memory' | 'file'): Promise<Cost> {
  const db = await openDatabase({ sqlitePath: join(dir, `store-${tempStore}-${randomBytes(4).toString('hex')}.sqlite`), tempStore });
  try {
    const next = rowsFactory();
    for (let i = 0; i < WARM / BATCH; i++) {
      const { rows, claims } = next(BATCH);
      await appendJournal(db, rows, claims);
    }
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const commits = Math.floor(ROWS / BATCH);
    for (let i = 0; i < commits; i++) {
      const { rows, claims } = next(BATCH);
      await appendJournal(db, rows, claims);
    }
    return perRow(cpu0, t0, commits * BATCH);
  } finally {
    await db.close();
  }
}

type Part = 'all' | 'no expiry index' | 'no command_id index' | 'journal alone';

/** The tables' shapes as migrations 0008 and 0010 make them, less what `part` takes away. */
function partSide(dir: string, part: Part): Cost {
  const raw = new BetterSqlite3(join(dir, `part-${randomBytes(4).toString('hex')}.sqlite`));
  try {
    raw.pragma('page_size = 4096');
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = FULL');
    raw.pragma('temp_store = MEMORY');
    const unique = part === 'no command_id index' || part === 'journal alone' ? '' : 'unique';
    raw.exec(`create table perp_journal (seq bigint primary key, command_id text not null ${unique}, kind text not null, command text not null,
      ts bigint not null, code text not null, last_event_seq bigint not null, result text not null)`);
    raw.exec(`create table perp_order_nonces (account text not null, nonce text not null, order_hash text not null, expiry bigint not null,
      used_at bigint not null, constraint perp_order_nonces_pk primary key (account, nonce))`);
    if (part === 'all' || part === 'no command_id index') raw.exec('create index perp_order_nonces_expiry_idx on perp_order_nonces (expiry)');
    const journal = raw.prepare(`insert into perp_journal values ${Array(BATCH).fill('(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`);
    const nonces = raw.prepare(`insert into perp_order_nonces values ${Array(BATCH).fill('(?, ?, ?, ?, ?)').join(', ')} on conflict (account, nonce) do nothing`);
    const commit = raw.transaction((rows: JournalRow[], claims: NonceClaimInput[]) => {
      journal.run(rows.flatMap((r) => [r.seq, r.commandId, r.kind, r.command, r.ts, r.code, r.lastEventSeq, r.result]));
      if (part !== 'journal alone') nonces.run(claims.flatMap((c) => [c.account, c.nonce, c.orderHash, c.expiry, c.usedAt]));
    });
    const next = rowsFactory();
    for (let i = 0; i < WARM / BATCH; i++) {
      const { rows, claims } = next(BATCH);
      commit.immediate(rows, claims);
    }
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const commits = Math.floor(ROWS / BATCH);
    for (let i = 0; i < commits; i++) {
      const { rows, claims } = next(BATCH);
      commit.immediate(rows, claims);
    }
    return perRow(cpu0, t0, commits * BATCH);
  } finally {
    raw.close();
  }
}

const fmt = (c: Cost) => `${c.cpuUs.toFixed(1)} µs (system ${c.sysUs.toFixed(1)}), wall ${c.wallUs.toFixed(1)} µs`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-commit-bench-'));
  try {
    console.log(`SQLite group commits of ${BATCH} orders (journal rows and nonces), ${ROWS} rows a side, CPU a row:`);
    console.log('| round | statement journals in memory | in temporary files | memory ÷ files |');
    console.log('| --- | --- | --- | ---: |');
    for (let r = 1; r <= ROUNDS; r++) {
      // Alternated, each side first in turn: this machine's speed drifts between minutes.
      const first = r % 2 === 1 ? 'memory' : 'file';
      const a = await storeSide(dir, first);
      const b = await storeSide(dir, first === 'memory' ? 'file' : 'memory');
      const [memory, file] = first === 'memory' ? [a, b] : [b, a];
      console.log(`| ${r} | ${fmt(memory)} | ${fmt(file)} | ${(memory.cpuUs / file.cpuUs).toFixed(2)} |`);
    }
    console.log('\nThe same rows on the tables\' shapes, parts taken away (statement journals in memory):');
    console.log('| schema | CPU a row |');
    console.log('| --- | --- |');
    for (const part of ['all', 'no expiry index', 'no command_id index', 'journal alone'] as const) console.log(`| ${part} | ${fmt(partSide(dir, part))} |`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
