/** JSON-schema pieces shared by the perpetual API's route modules (validation, response shape, OpenAPI). */
import { ADDRESS_PATTERN, DECIMAL_PATTERN } from '../http/schema-patterns.ts';

export const address = { type: 'string', pattern: ADDRESS_PATTERN } as const;
export const decimal = { type: 'string', pattern: DECIMAL_PATTERN } as const;
export const decimalOut = { type: 'string', description: 'exact decimal string' } as const;
export const millis = { type: 'integer', description: 'milliseconds since the Unix epoch' } as const;

export const permissionList = {
  type: 'array',
  minItems: 1,
  maxItems: 3,
  uniqueItems: true,
  items: { type: 'string', enum: ['READ', 'TRADE', 'TRANSFER'] },
} as const;

/** Wraps a data schema in the success envelope `{code: 0, msg: "ok", data, requestId}`. */
export function okEnvelope(data: Record<string, unknown>) {
  return {
    type: 'object',
    required: ['code', 'msg', 'data', 'requestId'],
    properties: {
      code: { type: 'integer', enum: [0] },
      msg: { type: 'string' },
      data,
      requestId: { type: 'string', format: 'uuid' },
    },
  } as const;
}

export const errorEnvelope = {
  type: 'object',
  required: ['code', 'msg', 'data', 'requestId'],
  properties: {
    code: { type: 'integer', description: 'a code of the documented table (docs/perp-api.md): 10xxx parameters, 20xxx authentication, 30001 permission, 40xxx not found, 42900 rate limit, 50xxx server, 51xxx/52xxx trading' },
    msg: { type: 'string' },
    data: { type: 'object', additionalProperties: true, description: '`{field}` for a parameter error, otherwise `{}`' },
    requestId: { type: 'string', format: 'uuid' },
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
