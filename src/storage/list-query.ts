/**
 * The list query every API list is: optional filters and an inclusive time range on a base query,
 * newest first, as a page (`offset`, `limit`) with the total of the rows that match. Written once so
 * that every list pages, breaks ties and counts alike on both engines.
 *
 * The base query carries what always applies (the account, the table's alias, a subquery); the
 * helper adds the conditions whose value the caller may leave out.
 */
import type { Selectable, SelectQueryBuilder, StringReference } from 'kysely';

/** One value (`=`) or a list (`in`); undefined leaves the condition out. */
export type FilterValue = string | number | readonly (string | number)[] | undefined;

/** Inclusive bounds (ms) on the spec's time column; either may be absent. */
export interface TimeRange {
  startTime?: number;
  endTime?: number;
}

export interface PageQuery extends TimeRange {
  /** Rows to skip. */
  offset: number;
  limit: number;
}

export interface ListSpec<DB, TB extends keyof DB> {
  /** Conditions applied in this order, each only when its value is defined. */
  filters?: ReadonlyArray<readonly [StringReference<DB, TB>, FilterValue]>;
  /** The column the time range bounds. */
  time?: StringReference<DB, TB>;
  /**
   * Sort keys, each descending. End with a unique one: rows tied on the others then keep one order,
   * and consecutive pages neither repeat nor skip a row.
   */
  newestFirst: readonly [StringReference<DB, TB>, ...StringReference<DB, TB>[]];
}

// Inside the helper the builder is untyped: the callers' columns are checked against their own
// tables by ListSpec, which Kysely cannot do for a generic table.
type AnyQuery = SelectQueryBuilder<any, any, any>;

/** The base query with the spec's defined filters and the range's defined bounds. */
export function withFilters<DB, TB extends keyof DB, O>(
  base: SelectQueryBuilder<DB, TB, O>,
  spec: Pick<ListSpec<DB, TB>, 'filters' | 'time'>,
  range: TimeRange = {},
): SelectQueryBuilder<DB, TB, O> {
  let q = base as AnyQuery;
  for (const [column, value] of (spec.filters ?? []) as ReadonlyArray<readonly [string, FilterValue]>) {
    if (value === undefined) continue;
    q = Array.isArray(value) ? q.where(column, 'in', value) : q.where(column, '=', value);
  }
  const time = spec.time as string | undefined;
  if (time !== undefined) {
    if (range.startTime !== undefined) q = q.where(time, '>=', range.startTime);
    if (range.endTime !== undefined) q = q.where(time, '<=', range.endTime);
  }
  return q as SelectQueryBuilder<DB, TB, O>;
}

/** Every column of the filtered rows, newest first by the spec's keys. */
export function newestFirst<DB, TB extends keyof DB>(
  base: SelectQueryBuilder<DB, TB, {}>,
  spec: ListSpec<DB, TB>,
  range: TimeRange = {},
): SelectQueryBuilder<DB, TB, Selectable<DB[TB]>> {
  return ordered(withFilters(base, spec, range) as AnyQuery, spec.newestFirst) as SelectQueryBuilder<DB, TB, Selectable<DB[TB]>>;
}

function ordered(filtered: AnyQuery, keys: readonly string[]): AnyQuery {
  let q = filtered.selectAll();
  for (const column of keys) q = q.orderBy(column, 'desc');
  return q;
}

/**
 * One page of the filtered rows, newest first, with the number of all of them (`total` ignores the
 * page). The limit is passed as given: callers bound it before.
 */
export async function listPage<DB, TB extends keyof DB, R>(
  base: SelectQueryBuilder<DB, TB, {}>,
  spec: NoInfer<ListSpec<DB, TB>>,
  page: PageQuery,
  map: (row: Selectable<DB[TB]>) => R,
): Promise<{ total: number; rows: R[] }> {
  const filtered = withFilters(base, spec, page) as AnyQuery;
  const [count, rows] = await Promise.all([
    filtered.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow() as Promise<{ n: number | string }>,
    ordered(filtered, spec.newestFirst).offset(page.offset).limit(page.limit).execute() as Promise<Selectable<DB[TB]>[]>,
  ]);
  return { total: Number(count.n), rows: rows.map((r) => map(r)) };
}
