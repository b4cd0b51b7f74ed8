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

export { MAX_PAGE, listOf, pageOf, pageQueryProps } from '../http/list-paging.ts';

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
