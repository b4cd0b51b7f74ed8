/**
 * Paging of every list endpoint of both APIs (contract.md §A "Values", §B): `page` from 1 and
 * `limit` 1 to 100, out-of-range values falling back to the defaults, answered as `{total, rows}`.
 */
import { Type, type Static, type TSchema } from './schema-kit.ts';

/** Pages past this would ask the database for offsets no list reaches (and beyond 64 bits). */
export const MAX_PAGE = 1_000_000_000;
export const DEFAULT_PAGE_LIMIT = 10;
export const MAX_PAGE_LIMIT = 100;

export const PageQueryProps = {
  page: Type.Optional(
    Type.Integer({ maximum: MAX_PAGE, description: `page number from 1 (default 1; values below 1 fall back to 1, at most ${MAX_PAGE})` }),
  ),
  limit: Type.Optional(
    Type.Integer({ description: `rows per page, 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT}; out-of-range values fall back to ${DEFAULT_PAGE_LIMIT})` }),
  ),
};

/** The page a query asks for, out-of-range values replaced by the defaults as the servers do. */
export function pageOf(query: { page?: number; limit?: number }): { page: number; limit: number; offset: number } {
  const page = query.page !== undefined && query.page >= 1 ? Math.floor(query.page) : 1;
  const limit = query.limit !== undefined && query.limit >= 1 && query.limit <= MAX_PAGE_LIMIT ? Math.floor(query.limit) : DEFAULT_PAGE_LIMIT;
  return { page, limit, offset: (page - 1) * limit };
}

/** The `{total, rows}` answer of a list. */
export function ListOf<S extends TSchema>(row: S) {
  return Type.Object({ total: Type.Integer(), rows: Type.Array(row) });
}

export interface Page<T> {
  total: number;
  rows: T[];
}
