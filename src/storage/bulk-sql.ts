import { CompiledQuery, type Kysely } from 'kysely';
import { kyselyOf, type DbExecutor } from './database.ts';

/**
 * Multi-row INSERT / upsert for bulk loads (the indexer's catch-up). Building a Kysely query of
 * thousands of rows costs as much as the database's own work, so the SQL text is generated once per
 * (engine, table, row count, conflict clause) and reused with fresh parameters. The text uses only
 * syntax both engines share (`insert … on conflict (…) do update set c = excluded.c`).
 */
export interface BulkTable {
  table: string;
  columns: readonly string[];
  /** Absent: a plain insert (a duplicate key fails). */
  onConflict?: { columns: readonly string[]; update: readonly string[] | 'nothing' };
  /**
   * Columns with the same value in every row, written into the SQL text instead of bound once per
   * row (an indexer's name on each of its event rows: one bound value fewer per row of a catch-up).
   * Values are identifiers (letters, digits, `_ . : -`) or integers; anything else is refused.
   */
  constants?: Readonly<Record<string, string | number>>;
}

/** SQLite: 32 766 bound parameters per statement (PostgreSQL 65 535); stay under both. */
const MAX_PARAMS = 30_000;
const MAX_ROWS = 2_000;

type Style = '?' | '$';
const styles = new WeakMap<object, Style>();
const texts = new Map<string, string>();

function styleOf(k: Kysely<any>): Style {
  // Transactions are new objects each time, their executor's adapter is not: key on the adapter.
  const adapter = k.getExecutor().adapter as object;
  let style = styles.get(adapter);
  if (style === undefined) {
    const compiled = k.selectFrom('meta').select('key').where('key', '=', 'x').compile();
    style = compiled.sql.includes('$1') ? '$' : '?';
    styles.set(adapter, style);
  }
  return style;
}

const quote = (id: string) => `"${id}"`;

const CONSTANT_TEXT = /^[A-Za-z0-9_.:-]*$/;

function literal(value: string | number): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`bulk-sql: constant ${value} is not a safe integer`);
    return String(value);
  }
  if (!CONSTANT_TEXT.test(value)) throw new Error('bulk-sql: a text constant may hold only letters, digits and _ . : -');
  return `'${value}'`;
}

function insertText(style: Style, spec: BulkTable, rows: number): string {
  const conflictKey = spec.onConflict
    ? `${spec.onConflict.columns.join(',')}>${spec.onConflict.update === 'nothing' ? '' : spec.onConflict.update.join(',')}`
    : '';
  const constants = spec.constants ? Object.entries(spec.constants) : [];
  const constantKey = constants.map(([c, v]) => `${c}=${typeof v}:${v}`).join(',');
  const key = `${style}|${spec.table}|${spec.columns.join(',')}|${rows}|${conflictKey}|${constantKey}`;
  let text = texts.get(key);
  if (text !== undefined) return text;
  const n = spec.columns.length;
  const fixed = constants.map(([, v]) => literal(v));
  const tuples = new Array<string>(rows);
  let p = 1;
  for (let r = 0; r < rows; r++) {
    const marks = new Array<string>(n);
    for (let c = 0; c < n; c++) marks[c] = style === '?' ? '?' : `$${p++}`;
    tuples[r] = `(${fixed.concat(marks).join(',')})`;
  }
  const columns = constants.map(([c]) => c).concat(spec.columns);
  text = `insert into ${quote(spec.table)} (${columns.map(quote).join(',')}) values ${tuples.join(',')}`;
  if (spec.onConflict) {
    const target = spec.onConflict.columns.map(quote).join(',');
    text +=
      spec.onConflict.update === 'nothing' || spec.onConflict.update.length === 0
        ? ` on conflict (${target}) do nothing`
        : ` on conflict (${target}) do update set ${spec.onConflict.update.map((c) => `${quote(c)} = excluded.${quote(c)}`).join(', ')}`;
  }
  // Full chunks and powers of two only (chunkRows): a few texts per table. The bound is a safeguard.
  if (texts.size > 512) texts.clear();
  texts.set(key, text);
  return text;
}

/**
 * Inserts `rows` (each an array of values in `spec.columns` order) in as few statements as the
 * parameter limits allow. Values: strings, numbers, null (no booleans: SQLite has none). The caller
 * must not pass the same conflict key twice (PostgreSQL rejects that in one upsert statement).
 */
export async function bulkInsert(db: DbExecutor, spec: BulkTable, rows: readonly (readonly unknown[])[]): Promise<void> {
  const n = spec.columns.length;
  await bulkInsertWith(db, spec, rows.length, (params, offset, r) => {
    const row = rows[r];
    for (let c = 0; c < n; c++) params[offset + c] = row[c];
  });
}

/**
 * Like `bulkInsert`, for `rowCount` rows whose values `write(params, offset, row)` stores at
 * `params[offset..offset + columns)`: no array per row, which matters at tens of thousands of rows.
 */
export async function bulkInsertWith(
  db: DbExecutor,
  spec: BulkTable,
  rowCount: number,
  write: (params: unknown[], offset: number, row: number) => void,
): Promise<void> {
  if (rowCount === 0) return;
  const k = kyselyOf(db);
  const style = styleOf(k);
  const n = spec.columns.length;
  const perChunk = Math.max(1, Math.min(MAX_ROWS, Math.floor(MAX_PARAMS / n)));
  for (let i = 0; i < rowCount; ) {
    const rows = chunkRows(rowCount - i, perChunk);
    const end = i + rows;
    const params = new Array<unknown>(rows * n);
    for (let r = i, p = 0; r < end; r++, p += n) write(params, p, r);
    await k.executeQuery(CompiledQuery.raw(insertText(style, spec, rows), params));
    i = end;
  }
}

/**
 * Rows in the next statement: a full chunk, else the largest power of two left. Each row count is
 * its own SQL text, which the database parses and plans again (SQLite's prepare of a statement with
 * thousands of parameters costs milliseconds); a remainder of any size would make nearly every
 * batch's last statement new, and fill the statement cache with texts used once. This way a table
 * has at most a dozen texts, each prepared once, for a few more statements per batch.
 */
export function chunkRows(left: number, perChunk: number): number {
  if (left >= perChunk) return perChunk;
  return 2 ** Math.floor(Math.log2(left));
}

/** Splits `values` into chunks small enough for an `in (…)` list on both engines. */
export function chunked<T>(values: readonly T[], size = 1_000): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size));
  return out;
}

/** The record field a column's value is read from: its name in camelCase (`order_id` → `orderId`). */
const fieldOf = (column: string): string => column.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
const fieldsBySpec = new WeakMap<BulkTable, readonly string[]>();

/**
 * Like `bulkInsertWith`, for records that hold each column's value under the column's name in
 * camelCase (a store's record and its table, field for column): no array per row either.
 */
export async function bulkInsertRecords(db: DbExecutor, spec: BulkTable, rows: readonly object[]): Promise<void> {
  let fields = fieldsBySpec.get(spec);
  if (fields === undefined) fieldsBySpec.set(spec, (fields = spec.columns.map(fieldOf)));
  const names = fields;
  const n = names.length;
  await bulkInsertWith(db, spec, rows.length, (params, offset, r) => {
    const row = rows[r] as Record<string, unknown>;
    for (let c = 0; c < n; c++) params[offset + c] = row[names[c]];
  });
}
