/**
 * Paging of every list endpoint of both APIs (contract.md §A "Values", §B): `page` from 1 and
 * `limit` 1 to 100, out-of-range values falling back to the defaults, answered as `{total, rows}`.
 */

/** Pages past this would ask the database for offsets no list reaches (and beyond 64 bits). */
export const MAX_PAGE = 1_000_000_000;

export const pageQueryProps = {
  page: { type: 'integer', maximum: MAX_PAGE, description: `page number from 1 (default 1; values below 1 fall back to 1, at most ${MAX_PAGE})` },
  limit: { type: 'integer', description: 'rows per page, 1 to 100 (default 10; out-of-range values fall back to 10)' },
} as const;

export function pageOf(query: { page?: number; limit?: number }): { page: number; limit: number; offset: number } {
  const page = query.page !== undefined && query.page >= 1 ? Math.floor(query.page) : 1;
  const limit = query.limit !== undefined && query.limit >= 1 && query.limit <= 100 ? Math.floor(query.limit) : 10;
  return { page, limit, offset: (page - 1) * limit };
}

/** The `{total, rows}` answer of a list, with its row schema. */
export function listOf(row: Record<string, unknown>) {
  return {
    type: 'object',
    required: ['total', 'rows'],
    properties: { total: { type: 'integer' }, rows: { type: 'array', items: row } },
  } as const;
}
