/**
 * The perpetual API in the shape clients of Monday Trade's trader API call it (docs/perp-api.md
 * "Monday Trade clients"; the real service as /work/shared/spec/monday-reference.md summarises it):
 * key creation by a personal-sign text message, `BASE/USDC` instrument names, numeric sides, the
 * perpetual expiry sentinel and per-order leverage. One implementation behind two shapes: these
 * schemas name what the Monday-shaped routes take and answer; the server maps them onto the
 * venue's own order service and market data.
 */
import { ADDRESS_PATTERN, SIGNATURE_PATTERN } from '../common/patterns.ts';
import { DecimalIn, Millis, Nullable, Type, type Static } from '../common/schema-kit.ts';
import { InstrumentSchema } from './perp-market-schemas.ts';
import { PermissionsOut, SubmittedOrderSchema } from './perp-schemas.ts';

/** `expiry` of every order of a Monday client: uint32 max, "perpetual". Anything else is refused. */
export const MONDAY_PERPETUAL_EXPIRY = 4_294_967_295;
/** Monday's numeric order sides. */
export const MONDAY_SIDE_SHORT = 1;
export const MONDAY_SIDE_LONG = 2;
/** The quote currency in Monday's instrument names (`BTC/USDC`); the venue settles in USD. */
export const MONDAY_QUOTE = 'USDC';
/**
 * Product names accepted in line 5 of the key-creation message: the real service's, as its clients
 * sign it unmodified, and this venue's own.
 */
export const MONDAY_KEY_PRODUCTS = ['Monday Trade', 'Tokex'] as const;
/** The permissions a key created by `api-key/create` gets: never TRANSFER. */
export const MONDAY_KEY_PERMISSIONS = ['READ', 'TRADE'] as const;
/** The `delegate` value of `one-click/prepare` that names the venue's own delegate. */
export const VENUE_DELEGATE = 'venue';

/**
 * The five lines a wallet personal-signs to create a key (joined by `\n`, no trailing newline):
 * `Chain ID: …`, `Wallet Address: …`, `Nonce: …`, `Timestamp: …`, and the product line.
 */
export function mondayKeyMessage(m: { chainID: number | string; address: string; nonce: string | number; timestamp: string | number }, product: string = MONDAY_KEY_PRODUCTS[0]): string {
  return [
    `Chain ID: ${m.chainID}`,
    `Wallet Address: ${m.address}`,
    `Nonce: ${m.nonce}`,
    `Timestamp: ${m.timestamp}`,
    `Sign this message to authenticate with ${product} API.`,
  ].join('\n');
}

/**
 * The body form Monday's client signs: the JSON body parsed and written again with its top-level
 * keys sorted (compact `JSON.stringify`, nested objects as they were). Undefined when `text` is not
 * a JSON object (then only the raw body can match).
 */
export function sortedTopLevelJson(text: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const obj = parsed as Record<string, unknown>;
  // No prototype: a `__proto__` key stays an own key here as JSON.parse made it (the server's
  // decoder refuses such a body anyway).
  const sorted: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const k of Object.keys(obj).sort()) sorted[k] = obj[k];
  return JSON.stringify(sorted);
}

/** The venue's symbol `BTC-USD` as Monday names it: `BTC/USDC`. */
export function mondayInstrumentName(symbol: string): string {
  const [base] = symbol.split('-');
  return `${base}/${MONDAY_QUOTE}`;
}

// ------------------------------------------------------------------ api-key/create

const TextNonce = Type.Union([Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }), Type.Integer({ minimum: 0 })], {
  description: 'the nonce written in line 3 of the message (1 to 64 letters, digits, `_`, `-`, or a non-negative integer); each (wallet, nonce) creates one key',
});

export const MondayCreateApiKeyBodySchema = Type.Object(
  {
    chainID: Type.Integer({ description: 'the chain id the service runs on (line 1 of the message)' }),
    address: Type.String({ pattern: ADDRESS_PATTERN, description: 'the wallet, as written in line 2 of the message (any case; Monday clients send lower case)' }),
    signature: Type.String({ pattern: SIGNATURE_PATTERN, description: "the wallet's personal-sign (EIP-191) signature of the five-line message" }),
    nonce: TextNonce,
    timestamp: Type.Union([Type.String({ pattern: '^[0-9]{10,13}$' }), Type.Integer({ minimum: 0 })], {
      description: 'line 4 of the message: ms since the epoch (13 digits) or seconds (10 digits); within 45 s of the server clock',
    }),
  },
  { additionalProperties: false },
);
export type MondayCreateApiKeyBody = Static<typeof MondayCreateApiKeyBodySchema>;

export const MondayCreatedApiKeySchema = Type.Object({
  apiKey: Type.String({ description: 'send it in X-Api-Key' }),
  apiSecret: Type.String({ description: 'the HMAC secret; answered only this once' }),
  permissions: PermissionsOut(),
});
export type MondayCreatedApiKey = Static<typeof MondayCreatedApiKeySchema>;

// ------------------------------------------------------------------ market data

export const MondayInstrumentsQuerySchema = Type.Object(
  { symbol: Type.Optional(Type.String({ minLength: 1, maxLength: 33, description: 'only this instrument: `BTC/USDC` (or the venue symbol `BTC-USD`)' })) },
  { additionalProperties: false },
);
export type MondayInstrumentsQuery = Static<typeof MondayInstrumentsQuerySchema>;

export const MondayInstrumentSchema = Type.Object({
  instrument: Type.String({ description: 'the name Monday clients use: `BASE/USDC`, e.g. BTC/USDC' }),
  expiry: Type.Integer({ description: `${MONDAY_PERPETUAL_EXPIRY}: perpetual` }),
  ...InstrumentSchema.properties,
});
export type MondayInstrument = Static<typeof MondayInstrumentSchema>;

export const MondayFundingHistoryQuerySchema = Type.Object(
  {
    chainId: Type.Integer({ description: 'the chain id the service runs on' }),
    symbol: Type.String({ minLength: 1, maxLength: 33, description: '`BASE/USDC` (URL-encoded: `BTC%2FUSDC`) or the venue symbol' }),
    startTime: Type.Optional(Millis()),
    endTime: Type.Optional(Millis()),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'rows, newest first (default 100)' })),
  },
  { additionalProperties: false },
);
export type MondayFundingHistoryQuery = Static<typeof MondayFundingHistoryQuerySchema>;

export const MondayFundingPointSchema = Type.Object({
  timestamp: Millis({ description: 'the funding time (ms)' }),
  long: Type.String({ description: 'the rate longs pay, a fraction of notional: positive when longs pay shorts' }),
  short: Type.String({ description: 'the rate shorts pay: the negation of long' }),
});
export type MondayFundingPoint = Static<typeof MondayFundingPointSchema>;

// ------------------------------------------------------------------ orders

const orderFields = {
  instrument: Type.String({ minLength: 1, maxLength: 33, description: '`BASE/USDC` as `market/instruments` lists it (the venue symbol is accepted too)' }),
  expiry: Type.Integer({ description: `must be ${MONDAY_PERPETUAL_EXPIRY} (perpetual)` }),
  size: DecimalIn({ description: 'base units, e.g. "0.5"' }),
  side: Type.Integer({ description: `${MONDAY_SIDE_SHORT} = short (sell), ${MONDAY_SIDE_LONG} = long (buy)` }),
  leverage: Type.Optional(
    Type.Union([DecimalIn(), Type.Integer({ minimum: 1 })], {
      description: "a whole number from 1 to the instrument's maximum: made the account's leverage on the market before the order when it differs",
    }),
  ),
  referralCode: Type.Optional(Type.String({ maxLength: 64, description: 'accepted and ignored (the venue has no referral programme)' })),
  deadline: Type.Optional(Type.Integer({ minimum: 0, description: 'accepted and ignored: nothing is sent on chain per order' })),
  gasLimit: Type.Optional(Type.Integer({ minimum: 0, description: 'accepted and ignored: nothing is sent on chain per order' })),
};

export const MondayMarketOrderBodySchema = Type.Object(
  {
    ...orderFields,
    slippageBps: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 10_000, description: 'worst price = mark × (1 ± slippageBps / 10 000), rounded inside the tolerance to the tick; default 10' }),
    ),
  },
  { additionalProperties: false },
);
export type MondayMarketOrderBody = Static<typeof MondayMarketOrderBodySchema>;

export const MondayLimitOrderBodySchema = Type.Object(
  {
    ...orderFields,
    price: DecimalIn({ description: 'limit price (USD per base unit)' }),
    postOnly: Type.Optional(Type.Boolean({ description: 'maker only (POST_ONLY): refused with 51003 if it would take' })),
    markPriceBufferInBps: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 10_000,
        description: 'guard: a long is refused above mark × (1 + bps/10 000), a short below mark × (1 − bps/10 000); absent or 0: no guard beyond the price band',
      }),
    ),
  },
  { additionalProperties: false },
);
export type MondayLimitOrderBody = Static<typeof MondayLimitOrderBodySchema>;

export const MondayOrderResultSchema = Type.Object({
  ...SubmittedOrderSchema.properties,
  txHash: Nullable(Type.String(), {
    description: 'always null: the order is matched off chain by the venue\'s engine, and no transaction is sent per order (settlement is batched on chain)',
  }),
  instrument: Type.String({ description: 'the order\'s instrument as Monday names it (BTC/USDC)' }),
});
export type MondayOrderResult = Static<typeof MondayOrderResultSchema>;

/** `one-click/prepare` naming the venue's own delegate instead of a session key. */
export const PrepareVenueDelegateBodySchema = Type.Object(
  {
    delegate: Type.Literal(VENUE_DELEGATE, { description: "the venue's own delegate: orders signed only by the API key (HMAC) are then accepted for the wallet" }),
    expiresAt: Millis({ description: 'ms, in the future and at most 30 days ahead' }),
  },
  { additionalProperties: false },
);
