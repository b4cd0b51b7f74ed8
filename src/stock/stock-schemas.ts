/** JSON-schema pieces shared by the stock API's route modules (request validation, response shape, OpenAPI). */
import { ADDRESS_PATTERN, DECIMAL_PATTERN } from '../http/schema-patterns.ts';

export const address = { type: 'string', pattern: ADDRESS_PATTERN } as const;
export const decimal = { type: 'string', pattern: DECIMAL_PATTERN } as const;
export const decimalOut = { type: 'string', description: 'exact decimal string' } as const;
export const millis = { type: 'integer', description: 'milliseconds since the Unix epoch' } as const;

export const symbolParam = {
  type: 'object',
  required: ['symbol'],
  properties: { symbol: { type: 'string', minLength: 1, maxLength: 16, description: 'stock symbol, e.g. AAPL' } },
} as const;

export const userParam = {
  type: 'object',
  required: ['userId'],
  properties: { userId: { ...address, description: 'the user\'s wallet address (case-insensitive)' } },
} as const;

/** Wraps a data schema in the success envelope. */
export function okEnvelope(data: Record<string, unknown>) {
  return {
    type: 'object',
    required: ['code', 'errMsg', 'uuid', 'data'],
    properties: {
      code: { type: 'integer', enum: [200] },
      errMsg: { type: 'string' },
      uuid: { type: 'string', format: 'uuid' },
      data,
    },
  } as const;
}

export const errorEnvelope = {
  type: 'object',
  required: ['code', 'errMsg', 'uuid'],
  properties: {
    code: { type: 'integer', description: '400 validation, 401 authentication (HTTP 400), 404, 409, 413, 429, 500, 503' },
    errMsg: { type: 'string' },
    uuid: { type: 'string', format: 'uuid' },
    data: {
      type: 'object',
      additionalProperties: true,
      description: 'facts to act on, when the error has them: a reverted One Click transaction answers its txHash and status',
    },
  },
} as const;

/** Standard responses: the success schema plus the error envelope for every failure status. */
export function responses(data: Record<string, unknown>) {
  return {
    200: okEnvelope(data),
    '4xx': errorEnvelope,
    '5xx': errorEnvelope,
  };
}

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

export function listOf(row: Record<string, unknown>) {
  return {
    type: 'object',
    required: ['total', 'rows'],
    properties: { total: { type: 'integer' }, rows: { type: 'array', items: row } },
  } as const;
}

export const authHeaders = {
  type: 'object',
  properties: {
    'x-api-key': { type: 'string' },
    'x-api-sign': { type: 'string' },
    'x-api-ts': { type: 'string' },
    'x-api-nonce': { type: 'string' },
    'x-api-chain-id': { type: 'string' },
    'x-api-p': { type: 'string' },
  },
} as const;
