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

function insertText(style: Style, spec: BulkTable, rows: number): string {
  const conflictKey = spec.onConflict
    ? `${spec.onConflict.columns.join(',')}>${spec.onConflict.update === 'nothing' ? '' : spec.onConflict.update.join(',')}`
    : '';
  const key = `${style}|${spec.table}|${spec.columns.join(',')}|${rows}|${conflictKey}`;
  let text = texts.get(key);
  if (text !== undefined) return text;
  const n = spec.columns.length;
  const tuples = new Array<string>(rows);
  let p = 1;
  for (let r = 0; r < rows; r++) {
    const marks = new Array<string>(n);
    for (let c = 0; c < n; c++) marks[c] = style === '?' ? '?' : `$${p++}`;
    tuples[r] = `(${marks.join(',')})`;
  }
  text = `insert into ${quote(spec.table)} (${spec.columns.map(quote).join(',')}) values ${tuples.join(',')}`;
  if (spec.onConflict) {
    const target = spec.onConflict.columns.map(quote).join(',');
    text +=
      spec.onConflict.update === 'nothing' || spec.onConflict.update.length === 0
        ? ` on conflict (${target}) do nothing`
        : ` on conflict (${target}) do update set ${spec.onConflict.update.map((c) => `${quote(c)} = excluded.${quote(c)}`).join(', ')}`;
  }
  // Only full chunks and the odd remainder are ever generated; keep the cache from growing unbounded.
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
  if (rows.length === 0) return;
  const k = kyselyOf(db);
  const style = styleOf(k);
  const n = spec.columns.length;
  const perChunk = Math.max(1, Math.min(MAX_ROWS, Math.floor(MAX_PARAMS / n)));
  for (let i = 0; i < rows.length; i += perChunk) {
    const end = Math.min(rows.length, i + perChunk);
    const params = new Array<unknown>((end - i) * n);
    let p = 0;
    for (let r = i; r < end; r++) {
      const row = rows[r];
      for (let c = 0; c < n; c++) params[p++] = row[c];
    }
    await k.executeQuery(CompiledQuery.raw(insertText(style, spec, end - i), params));
  }
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
  for (let i = 0; i < rowCount; i += perChunk) {
    const end = Math.min(rowCount, i + perChunk);
    const params = new Array<unknown>((end - i) * n);
    for (let r = i, p = 0; r < end; r++, p += n) write(params, p, r);
    await k.executeQuery(CompiledQuery.raw(insertText(style, spec, end - i), params));
  }
}

/** Splits `values` into chunks small enough for an `in (…)` list on both engines. */
export function chunked<T>(values: readonly T[], size = 1_000): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size));
  return out;
}
