/**
 * Paging over the list endpoints of both APIs, which take `page` (from 1) and `limit` (1 to 100)
 * and answer `{total, rows}` newest first. Rows that arrive while paging shift older rows to later
 * pages, so a row may be seen twice: key them by id when that matters.
 */

export interface PageResult<T> {
  total: number;
  rows: T[];
}

export interface PaginateOptions {
  /** Rows per request (1 to 100). Default 100. */
  limit?: number;
  /** First page to read. Default 1. */
  startPage?: number;
  /** Stop after this many rows. Default: all. */
  maxRows?: number;
}

/** Every row of a list, page after page: `for await (const t of paginate((p) => perp.listTrades({ ...p, symbol })))`. */
export async function* paginate<T>(fetchPage: (page: { page: number; limit: number }) => Promise<PageResult<T>>, opts: PaginateOptions = {}): AsyncGenerator<T, void, undefined> {
  const limit = opts.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new RangeError('limit: an integer from 1 to 100');
  let page = opts.startPage ?? 1;
  let seen = 0;
  for (;;) {
    const res = await fetchPage({ page, limit });
    for (const row of res.rows) {
      if (opts.maxRows !== undefined && seen >= opts.maxRows) return;
      seen++;
      yield row;
    }
    if (res.rows.length < limit || page * limit >= res.total) return;
    page++;
  }
}

/** All rows of a list in one array (mind the size of what you ask for). */
export async function collectAll<T>(fetchPage: (page: { page: number; limit: number }) => Promise<PageResult<T>>, opts: PaginateOptions = {}): Promise<T[]> {
  const out: T[] = [];
  for await (const row of paginate(fetchPage, opts)) out.push(row);
  return out;
}
