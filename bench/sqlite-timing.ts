/**
 * Where a bench server's SQLite time goes, by purpose: every better-sqlite3 prepare and statement
 * call (run, all, get, iterate) timed in this process and charged to the journal, the order nonces,
 * the projector or anything else, by the tables its statement names. A transaction's BEGIN,
 * pragmas and COMMIT (where SQLite waits for fsync on a durable commit) go to the purpose of the
 * first statement inside it that names a table: Kysely's SQLite driver runs one transaction at a
 * time on the one connection, so statements in between belong to it.
 *
 * A CPU profile cannot tell these apart: the statements run after an `await`, so their sampled
 * stacks start at the microtask queue and never name the store that issued them. Installed only by
 * the bench's server child under BENCH_PERP_PROF (a few hrtime reads a statement).
 */
import { createRequire } from 'node:module';

export type SqlPurpose = 'journal' | 'nonce claim' | 'projector' | 'other';

export interface SqlTotals {
  /** Time inside SQLite calls (prepare included), µs, by purpose. */
  us: Record<SqlPurpose, number>;
  /** Of which COMMIT statements, µs, by purpose. */
  commitUs: Record<SqlPurpose, number>;
  statements: Record<SqlPurpose, number>;
  commits: Record<SqlPurpose, number>;
}

const PURPOSES: SqlPurpose[] = ['journal', 'nonce claim', 'projector', 'other'];

function purposeOf(sql: string): SqlPurpose | undefined {
  if (/\bperp_journal\b|\bperp_snapshots\b/.test(sql)) return 'journal';
  if (/\bperp_order_nonces\b/.test(sql)) return 'nonce claim';
  if (/\bperp_[a-z_]+\b|\bmeta\b/.test(sql)) return 'projector';
  if (/^\s*(begin|commit|rollback|pragma|savepoint|release)\b/i.test(sql)) return undefined;
  return 'other';
}

const zero = (): Record<SqlPurpose, number> => ({ journal: 0, 'nonce claim': 0, projector: 0, other: 0 });

/** Patches better-sqlite3 in this process (once) and answers a reader of the running totals. */
export function instrumentSqlite(): { totals(): SqlTotals } {
  const Database = createRequire(import.meta.url)('better-sqlite3') as { prototype: { prepare(sql: string): unknown } };
  const totals: SqlTotals = { us: zero(), commitUs: zero(), statements: zero(), commits: zero() };
  // Statements of an open transaction whose purpose is not known yet (BEGIN, a pragma).
  let pendingUs = 0;
  let inTx = false;
  let current: SqlPurpose | undefined;
  // A prepare's time, charged with the statement's execution that follows it (Kysely's driver prepares every query).
  let carry = 0;
  const charge = (sql: string, executed: number) => {
    const us = executed + carry;
    carry = 0;
    const p = purposeOf(sql);
    const lower = sql.trimStart().slice(0, 8).toLowerCase();
    if (lower.startsWith('begin')) {
      inTx = true;
      current = undefined;
      pendingUs += us;
      return;
    }
    if (lower.startsWith('commit') || lower.startsWith('rollback')) {
      const to = current ?? 'other';
      totals.us[to] += us + pendingUs;
      if (lower.startsWith('commit')) {
        totals.commitUs[to] += executed;
        totals.commits[to]++;
      }
      pendingUs = 0;
      inTx = false;
      current = undefined;
      return;
    }
    if (p === undefined) {
      if (inTx && current !== undefined) totals.us[current] += us;
      else if (inTx) pendingUs += us;
      else totals.us.other += us;
      return;
    }
    if (inTx && current === undefined) {
      current = p;
      totals.us[p] += pendingUs;
      pendingUs = 0;
    }
    const to = inTx ? current! : p;
    totals.us[to] += us;
    totals.statements[to]++;
  };
  const proto = Database.prototype as { prepare(sql: string): unknown; __benchTimed?: boolean };
  if (!proto.__benchTimed) {
    proto.__benchTimed = true;
    const prepare = proto.prepare;
    let statementProto: Record<string, unknown> | undefined;
    proto.prepare = function (this: unknown, sql: string) {
      const t0 = process.hrtime.bigint();
      const stmt = prepare.call(this, sql) as { source: string };
      carry += Number(process.hrtime.bigint() - t0) / 1e3;
      if (statementProto === undefined) {
        statementProto = Object.getPrototypeOf(stmt) as Record<string, unknown>;
        for (const method of ['run', 'all', 'get', 'iterate']) {
          const original = statementProto[method] as (...args: unknown[]) => unknown;
          statementProto[method] = function (this: { source: string }, ...args: unknown[]) {
            const s0 = process.hrtime.bigint();
            try {
              return original.apply(this, args);
            } finally {
              charge(this.source, Number(process.hrtime.bigint() - s0) / 1e3);
            }
          };
        }
      }
      return stmt;
    };
  }
  return {
    totals: () => ({ us: { ...totals.us }, commitUs: { ...totals.commitUs }, statements: { ...totals.statements }, commits: { ...totals.commits } }),
  };
}

/** b − a, by purpose. */
export function sqlDelta(a: SqlTotals, b: SqlTotals): SqlTotals {
  const d = (x: Record<SqlPurpose, number>, y: Record<SqlPurpose, number>) => Object.fromEntries(PURPOSES.map((p) => [p, y[p] - x[p]])) as Record<SqlPurpose, number>;
  return { us: d(a.us, b.us), commitUs: d(a.commitUs, b.commitUs), statements: d(a.statements, b.statements), commits: d(a.commits, b.commits) };
}
