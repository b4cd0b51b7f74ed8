/**
 * The stock API's envelope and the pieces its route groups share (contract.md §A,
 * docs/stock-api.md): each schema is what the server validates and serialises with and what
 * openapi/stock-api.json prints; each type is derived from it. Amounts are exact decimal strings,
 * answer times milliseconds since the Unix epoch, `deadline`s Unix seconds.
 */
import { TX_HASH_PATTERN, UINT_PATTERN } from '../common/patterns.ts';
import type { SchemaOptions, TUnsafe } from '@sinclair/typebox';
import { AddressIn, AnyObject, DecimalIn, Millis, Type, type Static, type TSchema } from '../common/schema-kit.ts';
import { STOCK_OK_CODE, type STOCK_ERROR_CODES, type StockErrorName } from './stock-error-codes.ts';
import { STOCK_MAX_UNIX_SECONDS, STOCK_SYMBOL_MAX_LENGTH } from './stock-enums.ts';
import { STOCK_HEADERS } from './stock-signing.ts';

// ------------------------------------------------------------------ stock-only kit

/**
 * An address in an answer: the same schema as a request's (`pattern` of a 0x-prefixed 20-byte hex
 * address), typed `0x${string}` as the pattern guarantees.
 */
export const StockAddressOut = (options: SchemaOptions = {}): TUnsafe<`0x${string}`> => Type.Unsafe<`0x${string}`>(AddressIn(options));

/** `{type: ['string', 'null'], enum: [...values, null]}`: one of the values or null. */
export function NullableStringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number] | null> {
  return Type.Unsafe<T[number] | null>({ type: ['string', 'null'], enum: [...values, null], ...options });
}

/**
 * A money figure Anchored types as a JSON number (anchored-reference.md: `price`, `change24H`,
 * `amount`, ...). The REST answer prints the exact decimal's own digits as the number's text
 * (`229.80`, `0.000001`), never a rounded float; a reader that parses numbers as decimals gets the
 * exact value, and the exact decimal string is also answered under tokex's own name where there is
 * one (docs/stock-api.md, "Answers").
 */
export const StockDecimalNumberOut = (options: SchemaOptions = {}) =>
  Type.Number({ description: 'exact decimal printed as a JSON number (its digits as they are, no exponent)', ...options });

/** The same, or null when there is no figure (no price yet). */
export const StockNullableDecimalNumberOut = (options: SchemaOptions = {}): TUnsafe<number | null> =>
  Type.Unsafe<number | null>({ type: ['number', 'null'], description: 'exact decimal printed as a JSON number, or null when there is none', ...options });

// ------------------------------------------------------------------ envelope

/** The envelope's `t` (anchored-reference.md §1: "server timestamp"): the server's clock when it answered, in ms. */
export const StockServerTime = () =>
  Type.Integer({ description: "the server's clock when it answered, milliseconds since the Unix epoch (on every answer, success or error)" });

/** The success envelope `{code: 200, errMsg, uuid, data, t}` around `data`. */
export function StockOk<S extends TSchema>(data: S) {
  return Type.Object({
    code: Type.Integer({ enum: [STOCK_OK_CODE] }),
    errMsg: Type.String(),
    uuid: Type.String({ format: 'uuid' }),
    data,
    t: StockServerTime(),
  });
}

/** The `code` of an error answer: one of the table's (never 200). */
export type StockErrorCode = (typeof STOCK_ERROR_CODES)[StockErrorName]['code'];

/**
 * Typed with the table's codes rather than `number`, so that a route's success answer can only be
 * checked against its 200 schema (a `data` of any object would otherwise pass as an error's).
 */
export const StockErrorEnvelopeSchema = Type.Object({
  code: Type.Unsafe<StockErrorCode>(Type.Integer({ description: '400 validation, 401 authentication (HTTP 400), 404, 409, 413, 429, 500, 503' })),
  errMsg: Type.String(),
  uuid: Type.String({ format: 'uuid' }),
  data: Type.Optional(
    AnyObject({ description: 'facts to act on, when the error has them: a reverted One Click transaction answers its txHash and status' }),
  ),
  t: StockServerTime(),
});
export type StockErrorEnvelope = Static<typeof StockErrorEnvelopeSchema>;

/** A route's responses: the success schema plus the error envelope for every failure status. */
export function stockResponses<S extends TSchema>(data: S) {
  return { 200: StockOk(data), '4xx': StockErrorEnvelopeSchema, '5xx': StockErrorEnvelopeSchema };
}

// ------------------------------------------------------------------ shared pieces

/** The six signing headers every `/api/v1` request carries (contract.md §A), Node's lower case. */
export const StockAuthHeadersSchema = Type.Object({
  [STOCK_HEADERS.key]: Type.Optional(Type.String()),
  [STOCK_HEADERS.sign]: Type.Optional(Type.String()),
  [STOCK_HEADERS.ts]: Type.Optional(Type.String()),
  [STOCK_HEADERS.nonce]: Type.Optional(Type.String()),
  [STOCK_HEADERS.chainId]: Type.Optional(Type.String()),
  [STOCK_HEADERS.product]: Type.Optional(Type.String()),
});

export const StockSymbolParams = Type.Object({
  symbol: Type.String({ minLength: 1, maxLength: STOCK_SYMBOL_MAX_LENGTH, description: 'stock symbol, e.g. AAPL' }),
});
export type StockSymbolParams = Static<typeof StockSymbolParams>;

/** The longest `{symbol}` `GET prices/{symbol}` takes: a token address (`0x` and 40 hex digits). */
export const STOCK_PRICE_KEY_MAX_LENGTH = 42;

/** `GET prices/{symbol}`: a stock symbol, the token's symbol or the token's address, in any case (anchored-reference.md §4.1). */
export const StockPriceParams = Type.Object({
  symbol: Type.String({
    minLength: 1,
    maxLength: STOCK_PRICE_KEY_MAX_LENGTH,
    description: 'stock symbol (AAPL), token symbol or token address (0x…), in any case: the server upper-cases it',
  }),
});
export type StockPriceParams = Static<typeof StockPriceParams>;

export const StockUserParams = Type.Object({
  userId: AddressIn({ description: "the user's wallet address (case-insensitive)" }),
});
export type StockUserParams = Static<typeof StockUserParams>;

export const StockTxHashIn = () => Type.String({ pattern: TX_HASH_PATTERN });

export const StockTxHashParams = Type.Object({ txHash: StockTxHashIn() });
export type StockTxHashParams = Static<typeof StockTxHashParams>;

export const StockOrderIdParams = Type.Object({
  orderId: Type.String({ pattern: UINT_PATTERN, description: 'decimal on-chain order id' }),
});
export type StockOrderIdParams = Static<typeof StockOrderIdParams>;

/** What every `…/tx` endpoint takes: the hash of a transaction the wallet sent itself. */
export const StockTxBodySchema = Type.Object({ txHash: StockTxHashIn() }, { additionalProperties: false });
export type StockTxBody = Static<typeof StockTxBodySchema>;

/** `startTime` and `endTime` of a list (ms, inclusive). */
export const StockTimeRangeProps = {
  startTime: Type.Optional(Millis({ minimum: 0 })),
  endTime: Type.Optional(Millis({ minimum: 0 })),
};

/** A `deadline`: Unix seconds, in the future, at most 4294967295 (the contracts' `uint32`, as Anchored documents). */
export const StockDeadlineIn = () =>
  Type.Integer({ maximum: STOCK_MAX_UNIX_SECONDS, description: `Unix seconds, in the future, at most ${STOCK_MAX_UNIX_SECONDS} (uint32)` });

/**
 * A request's amount, typed "string / number" as Anchored types it (anchored-reference.md §4.3-4.5):
 * a decimal string, or a JSON number, which the server reads from its text exactly, never through a
 * float (`9007199254740993` stays that number). Either way: digits with an optional fraction, no
 * sign or exponent, at most the token's decimals, at most 2^96 - 1 of its smallest units.
 *
 * The schema (what the server validates and the OpenAPI prints) takes both; the TypeScript type is
 * `string`, what a handler receives (the request decoder hands a number on as its digits) and what
 * a client should send (a JavaScript number past 15 digits is not the number written).
 */
export const StockAmountIn = (options: SchemaOptions = {}): TUnsafe<string> => {
  const form = 'a decimal string like "12.5", or a JSON number written the same way (read exactly from its digits)';
  return Type.Unsafe<string>({
    anyOf: [DecimalIn(), Type.Number()],
    ...options,
    description: options.description ? `${options.description}: ${form}` : form,
  });
};
