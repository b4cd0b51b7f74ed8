/**
 * The sandbox control API (`{stock_base_url}/sandbox/v1`, docs/sandbox.md): what its routes take and
 * answer, inside the stock API's envelope `{code, errMsg, uuid, data, t}`. Authorised with
 * `Authorization: Bearer <token>` (demo.json's `sandbox.token`), never with the signed headers.
 */
import { ADDRESS_PATTERN, DECIMAL_PATTERN } from '../common/patterns.ts';
import { DecimalOut, Millis, Nullable, StringEnum, Type, type Static } from '../common/schema-kit.ts';

/** Where the routes start, after the stock API's base URL (its service prefix included). */
export const SANDBOX_PATH = '/sandbox/v1';

/** The faults the sandbox injects (docs/sandbox.md, "Faults"). */
export const SANDBOX_FAULT_KINDS = ['rate-limit', 'http-503', 'executor-paused', 'chain-stall'] as const;
export type SandboxFaultKind = (typeof SANDBOX_FAULT_KINDS)[number];

/** What a `http-503` fault stands for: the database or shared store away, or the chain's node. */
export const SANDBOX_OUTAGE_CAUSES = ['storage', 'chain'] as const;

/** Most requests one counted fault answers. */
export const SANDBOX_MAX_FAULT_COUNT = 1_000_000;
/** Longest `Retry-After` of a rate-limit fault: the real limiter's window is a minute. */
export const SANDBOX_MAX_RETRY_AFTER_S = 60;

// ------------------------------------------------------------------ clock

export const SandboxClockSchema = Type.Object({
  now: Millis({ description: 'the stack\'s clock, ms' }),
  frozen: Type.Boolean({ description: 'whether the clock stands still (always false until clock control is built)' }),
});
export type SandboxClock = Static<typeof SandboxClockSchema>;

// ------------------------------------------------------------------ prices

export const SandboxPriceRequestSchema = Type.Object(
  {
    symbol: Type.String({ minLength: 1, maxLength: 32, description: 'an underlying the simulator quotes (BTC, AAPL) or a perpetual (BTC-USD: its underlying)' }),
    price: Type.Optional(Type.String({ maxLength: 32, description: 'the price to quote, a positive decimal with at most two places' })),
    release: Type.Optional(Type.Boolean({ description: 'true: hand the price back to the simulator' })),
  },
  { additionalProperties: false },
);
export type SandboxPriceRequest = Static<typeof SandboxPriceRequestSchema>;

export const SandboxQuoteSchema = Type.Object({
  bid: DecimalOut(),
  ask: DecimalOut(),
  last: DecimalOut(),
  timestamp: Millis(),
});

export const SandboxPerpIndexSchema = Type.Object({
  symbol: Type.String({ description: 'the perpetual whose index the underlying is' }),
  indexPrice: DecimalOut(),
});

export const SandboxPriceSchema = Type.Object({
  symbol: Type.String({ description: 'the underlying' }),
  pinned: Type.Boolean(),
  price: Nullable(Type.String({ description: 'the pinned price; on a release, the pin released (null when there was none)' })),
  /** A pin: when it was set. A release: absent. */
  setAt: Type.Optional(Millis()),
  released: Type.Optional(Type.Boolean({ description: 'a release: whether a pin was in force' })),
  quote: SandboxQuoteSchema,
  perp: Type.Array(SandboxPerpIndexSchema, { description: 'the index of each perpetual of the underlying, as the engine holds it now' }),
});
export type SandboxPrice = Static<typeof SandboxPriceSchema>;

// ------------------------------------------------------------------ fund

export const SandboxFundRequestSchema = Type.Object(
  {
    address: Type.String({ pattern: ADDRESS_PATTERN }),
    asset: Type.String({ minLength: 1, maxLength: 32, description: '`USDC` (the venue\'s cash token, the perpetual collateral too) or a stock symbol' }),
    amount: Type.String({ pattern: DECIMAL_PATTERN, maxLength: 80, description: 'token units, at most the token\'s decimals' }),
  },
  { additionalProperties: false },
);
export type SandboxFundRequest = Static<typeof SandboxFundRequestSchema>;

export const SandboxFundSchema = Type.Object({
  address: Type.String({ description: 'checksummed' }),
  asset: Type.String(),
  amount: DecimalOut(),
  txHash: Type.String(),
  balance: DecimalOut({ description: 'the wallet\'s balance of the asset in the block that minted it' }),
});
export type SandboxFund = Static<typeof SandboxFundSchema>;

// ------------------------------------------------------------------ faults

export const SandboxFaultRequestSchema = Type.Object(
  {
    kind: StringEnum(SANDBOX_FAULT_KINDS),
    apiKey: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'rate-limit: the API key (stock or perpetual)' })),
    path: Type.Optional(Type.String({ minLength: 1, maxLength: 512, pattern: '^/', description: 'http-503: the path prefix answered 503' })),
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: SANDBOX_MAX_FAULT_COUNT, description: 'rate-limit, http-503: how many requests' })),
    retryAfterSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: SANDBOX_MAX_RETRY_AFTER_S, description: 'rate-limit: the answers\' Retry-After (default 1)' })),
    cause: Type.Optional(StringEnum(SANDBOX_OUTAGE_CAUSES, { description: 'http-503: the outage answered (default storage)' })),
  },
  { additionalProperties: false },
);
export type SandboxFaultRequest = Static<typeof SandboxFaultRequestSchema>;

export const SandboxFaultSchema = Type.Object({
  id: Type.String(),
  kind: StringEnum(SANDBOX_FAULT_KINDS),
  createdAt: Millis(),
  apiKey: Type.Optional(Type.String()),
  path: Type.Optional(Type.String()),
  count: Type.Optional(Type.Integer({ description: 'requests the fault was set for' })),
  remaining: Type.Optional(Type.Integer({ description: 'requests it still answers' })),
  retryAfterSeconds: Type.Optional(Type.Integer()),
  cause: Type.Optional(StringEnum(SANDBOX_OUTAGE_CAUSES)),
  heldTicks: Type.Optional(Type.Integer({ description: 'executor-paused: the executor\'s ticks it has held so far (each chain\'s executor counts)' })),
});
export type SandboxFault = Static<typeof SandboxFaultSchema>;

export const SandboxFaultListSchema = Type.Object({ faults: Type.Array(SandboxFaultSchema) });
export type SandboxFaultList = Static<typeof SandboxFaultListSchema>;

export const SandboxFaultsClearedSchema = Type.Object({ cleared: Type.Array(SandboxFaultSchema) });
export type SandboxFaultsCleared = Static<typeof SandboxFaultsClearedSchema>;
