/**
 * What the journal's group commit pays for each durable index an order's row lands in (issue 40,
 * docs/performance.md "The journal's writer: what its indexes cost"): the same rows, in commits of
 * BENCH_INDEX_GROUP (default 20) on SQLite with WAL and `synchronous = FULL` as the venue runs it,
 * over a table that already holds BENCH_INDEX_PRE (default 200 000) orders, with the layouts:
 *
 * - `production`: `openDatabase` with the project's migrations and `appendJournal` itself: the
 *   journal row (its `seq` key, its unique `command_id`) and the order's nonce claim
 *   (`perp_order_nonces`: its rowid table, its (account, nonce) key, its expiry index);
 * - `production tables, prepared statements`: the same tables, written with two statements prepared
 *   once (what the rows cost SQLite, without the query builder's part);
 * - `no nonce table`: the journal row alone, its two keys as in production;
 * - `no command-id index`: the journal row with `seq` as the rowid and no index on `command_id`;
 *   the nonce table as in production;
 * - `append only`: the journal row with `seq` as the rowid and nothing else.
 *
 * An order's command id (`ord:` and its EIP-712 hash) and its nonce (63 random bits) are random, so
 * each lands on a page of its index that no other row of the commit touches; a commit writes every
 * page it changed to the WAL, whole, and the checkpoint copies it back. The figure is this thread's
 * CPU a row (user + system: SQLite's B-tree work and the kernel's copying of the WAL's pages), the
 * writer thread's share of a journalled order.
 *
 *   npx tsx bench/journal-index-cost-bench.ts     (BENCH_INDEX_GROUP, BENCH_INDEX_PRE, BENCH_INDEX_ROWS, BENCH_INDEX_ROUNDS)
 */
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '../src/storage/database.ts';
import { appendJournal, type JournalNonceClaim, type JournalRow } from '../src/perp/store/engine-journal-store.ts';
import { commandToText } from '../src/perp/sequencer/engine-codec.ts';
import type { EngineCommand } from '../src/perp/engine/engine-types.ts';

export type Layout = 'production' | 'production tables, prepared statements' | 'no nonce table' | 'no command-id index' | 'append only';
export const LAYOUTS: readonly Layout[] = ['production', 'production tables, prepared statements', 'no nonce table', 'no command-id index', 'append only'];

export interface IndexCostOptions {
  group?: number;
  pre?: number;
  rows?: number;
  rounds?: number;
}

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** An order as the journal holds it: a place-order command of a random hash, its answer, its nonce claim. */
function order(seq: number): { row: JournalRow; nonce: JournalNonceClaim } {
  const hash = `0x${randomBytes(32).toString('hex')}`;
  const account = `0x${(seq % 16).toString(16).padStart(40, 'a')}`;
  const cmd = {
    kind: 'placeOrder',
    id: `ord:${hash}`,
    ts: 1_764_000_000_000 + seq,
    account,
    symbol: 'BTC-USD',
    side: seq % 2 === 0 ? 'BUY' : 'SELL',
    type: 'LIMIT',
    priceTicks: 500_000 + (seq % 300),
    sizeLots: 10 + (seq % 190),
    timeInForce: 'GTC',
    expiresAtMs: 1_764_003_600_000 + seq,
  } as unknown as EngineCommand;
  const row: JournalRow = {
    seq,
    commandId: `ord:${hash}`,
    kind: 'placeOrder',
    command: commandToText(cmd),
    ts: 1_764_000_000_000 + seq,
    code: 'OK',
    lastEventSeq: seq * 3,
    result: `{"ok":true,"code":"OK","orderId":${seq},"status":"NEW","filledLots":"0"}`,
  };
  const nonce: JournalNonceClaim = {
    account,
    nonce: String(BigInt(`0x${randomBytes(8).toString('hex')}`) >> 1n),
    orderHash: hash,
    expiry: 1_764_003_600_000 + seq,
    usedAt: 1_764_000_000_000 + seq,
  };
  return { row, nonce };
}

/** A writer of one layout: `append(from, count)` makes one durable commit of `count` orders. */
async function openLayout(layout: Layout, file: string): Promise<{ append(from: number, count: number): Promise<void>; close(): Promise<void> }> {
  if (layout === 'production') {
    const db = await openDatabase({ sqlitePath: file, migrate: true });
    return {
      async append(from, count) {
        const orders = Array.from({ length: count }, (_, i) => order(from + i));
        await appendJournal(
          db,
          orders.map((o) => o.row),
          orders.map((o) => o.nonce),
        );
      },
      close: () => db.close(),
    };
  }
  const raw = new Database(file);
  raw.pragma('page_size = 4096');
  raw.pragma('journal_mode = WAL');
  raw.pragma('synchronous = FULL');
  const both = layout === 'production tables, prepared statements';
  const keys = layout === 'no nonce table' || both ? 'seq bigint primary key, command_id text not null unique' : 'seq integer primary key, command_id text not null';
  raw.exec(`create table perp_journal (${keys}, kind text not null, command text not null, ts bigint not null, code text not null, last_event_seq bigint not null, result text not null)`);
  const nonces = layout === 'no command-id index' || both;
  if (nonces) {
    raw.exec(`create table perp_order_nonces (account text not null, nonce text not null, order_hash text not null, expiry bigint not null, used_at bigint not null,
      constraint perp_order_nonces_pk primary key (account, nonce));
      create index perp_order_nonces_expiry_idx on perp_order_nonces (expiry)`);
  }
  const insertRow = raw.prepare('insert into perp_journal values (?, ?, ?, ?, ?, ?, ?, ?)');
  const insertNonce = nonces ? raw.prepare('insert into perp_order_nonces values (?, ?, ?, ?, ?) on conflict (account, nonce) do nothing') : undefined;
  const commit = raw.transaction((orders: Array<{ row: JournalRow; nonce: JournalNonceClaim }>) => {
    for (const { row: r, nonce: n } of orders) {
      insertRow.run(r.seq, r.commandId, r.kind, r.command, r.ts, r.code, r.lastEventSeq, r.result);
      insertNonce?.run(n.account, n.nonce, n.orderHash, n.expiry, n.usedAt);
    }
  });
  return {
    async append(from, count) {
      commit(Array.from({ length: count }, (_, i) => order(from + i)));
    },
    async close() {
      raw.close();
    },
  };
}

export interface IndexCostFigure {
  layout: Layout;
  /** Each round's CPU a journalled order, µs. */
  rounds: number[];
}

export async function runJournalIndexCost(opts: IndexCostOptions = {}): Promise<IndexCostFigure[]> {
  const group = opts.group ?? Number(process.env.BENCH_INDEX_GROUP ?? 20);
  const pre = opts.pre ?? Number(process.env.BENCH_INDEX_PRE ?? 200_000);
  const rows = opts.rows ?? Number(process.env.BENCH_INDEX_ROWS ?? 10_000);
  const rounds = opts.rounds ?? Number(process.env.BENCH_INDEX_ROUNDS ?? 2);
  const figures = new Map<Layout, number[]>(LAYOUTS.map((l) => [l, []]));
  for (let r = 0; r < rounds; r++) {
    // Alternated: each round runs the layouts in turn, the next round in the other order.
    for (const layout of r % 2 === 0 ? LAYOUTS : [...LAYOUTS].reverse()) {
      const dir = mkdtempSync(join(tmpdir(), 'tokex-index-cost-'));
      try {
        const w = await openLayout(layout, join(dir, 'journal.sqlite'));
        let seq = 1;
        // The table as a venue's after some days: its indexes far larger than a commit.
        for (; seq <= pre; seq += 1_000) await w.append(seq, 1_000);
        const t0 = cpuUs();
        for (const end = seq + rows; seq < end; seq += group) await w.append(seq, group);
        figures.get(layout)!.push((cpuUs() - t0) / rows);
        await w.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  return LAYOUTS.map((layout) => ({ layout, rounds: figures.get(layout)! }));
}

/** The figures as a table: each layout's rounds, and its best round against production's best. */
export function journalIndexCostTable(figures: readonly IndexCostFigure[]): string {
  const best = (f: IndexCostFigure) => Math.min(...f.rounds);
  const production = figures.find((f) => f.layout === 'production');
  const lines = ['| layout | CPU a journalled order, each round (µs) | best ÷ production best |', '| --- | ---: | ---: |'];
  for (const f of figures) lines.push(`| ${f.layout} | ${f.rounds.map((v) => v.toFixed(1)).join(' / ')} | ${production ? (best(f) / best(production)).toFixed(2) : '—'} |`);
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(journalIndexCostTable(await runJournalIndexCost()));
}
