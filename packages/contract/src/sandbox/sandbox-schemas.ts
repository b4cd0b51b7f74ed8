/**
 * The sandbox control API (`{stock_base_url}/sandbox/v1`, docs/sandbox.md): what its routes take and
 * answer, inside the stock API's envelope `{code, errMsg, uuid, data, t}`. Authorised with
 * `Authorization: Bearer <token>` (demo.json's `sandbox.token`), never with the signed headers.
 */
import { ADDRESS_PATTERN, DECIMAL_PATTERN } from '../common/patterns.ts';
import { DecimalOut, Millis, Nullable, StringEnum, Type, type Static } from '../common/schema-kit.ts';
import { StockCorporateActionSchema } from '../stock/stock-market-schemas.ts';

/** Where the routes start, after the stock API's base URL (its service prefix included). */
export const SANDBOX_PATH = '/sandbox/v1';

/** The faults the sandbox injects (docs/sandbox.md, "Faults"). */
export const SANDBOX_FAULT_KINDS = ['rate-limit', 'http-503', 'executor-paused', 'chain-stall', 'stream-drop'] as const;
export type SandboxFaultKind = (typeof SANDBOX_FAULT_KINDS)[number];

/** What a `http-503` fault stands for: the database or shared store away, or the chain's node. */
export const SANDBOX_OUTAGE_CAUSES = ['storage', 'chain'] as const;

/** The WebSocket streams a `stream-drop` fault closes: one API's, or both. */
export const SANDBOX_STREAMS = ['stock', 'perp', 'all'] as const;
export type SandboxStream = (typeof SANDBOX_STREAMS)[number];

/**
 * How a `stream-drop` closes a connection: `close` with 1012 "service restart" (a venue's rolling
 * restart), or `terminate`: the socket cut with no close frame (a network failure; the client's
 * WebSocket reports 1006).
 */
export const SANDBOX_STREAM_DROP_MODES = ['close', 'terminate'] as const;
export type SandboxStreamDropMode = (typeof SANDBOX_STREAM_DROP_MODES)[number];
/** The close code and reason of a `stream-drop` in `close` mode (RFC 6455 §7.4, IANA registry). */
export const SANDBOX_STREAM_DROP_CLOSE = { code: 1012, reason: 'service restart' } as const;

/** Most requests one counted fault answers. */
export const SANDBOX_MAX_FAULT_COUNT = 1_000_000;
/** Longest `Retry-After` of a rate-limit fault: the real limiter's window is a minute. */
export const SANDBOX_MAX_RETRY_AFTER_S = 60;

// ------------------------------------------------------------------ clock

// GET /clock and the clock control: sandbox-clock-schemas.ts.

// ------------------------------------------------------------------ prices

/** Most steps of one price path. */
export const SANDBOX_MAX_PATH_STEPS = 100;
/** The latest step of a price path: an hour after the request. */
export const SANDBOX_MAX_PATH_MS = 3_600_000;

function SandboxPriceStepSchema() {
  return Type.Object(
    {
      price: Type.String({ maxLength: 32, description: 'the price to pin, as `price` takes it' }),
      afterMs: Type.Integer({ minimum: 0, maximum: SANDBOX_MAX_PATH_MS, description: 'ms after the request' }),
    },
    { additionalProperties: false },
  );
}

export const SandboxPriceRequestSchema = Type.Object(
  {
    symbol: Type.String({ minLength: 1, maxLength: 32, description: 'an underlying the simulator quotes (BTC, AAPL) or a perpetual (BTC-USD: its underlying)' }),
    price: Type.Optional(Type.String({ maxLength: 32, description: 'the price to quote, a positive decimal with at most two places' })),
    release: Type.Optional(Type.Boolean({ description: 'true: hand the price back to the simulator' })),
    path: Type.Optional(
      Type.Array(SandboxPriceStepSchema(), {
        minItems: 1,
        maxItems: SANDBOX_MAX_PATH_STEPS,
        description: 'prices pinned in turn, each `afterMs` after the request (not before the step before it)',
      }),
    ),
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

/** A price path's answer: its schedule, given at once (the steps are pinned later, in turn). */
export const SandboxPricePathSchema = Type.Object({
  symbol: Type.String({ description: 'the underlying' }),
  startedAt: Millis({ description: 'when the path started: every `at` is `startedAt + afterMs`' }),
  path: Type.Array(
    Type.Object({
      price: Type.String({ description: 'the pin, two decimal places' }),
      afterMs: Type.Integer(),
      at: Millis({ description: 'when this step is pinned' }),
    }),
  ),
  endsAt: Millis({ description: 'the last step\'s moment: its price stays pinned after it, until a pin or a release' }),
  replaced: Type.Boolean({ description: 'whether a path of this underlying was still running and is cancelled by this one' }),
});
export type SandboxPricePath = Static<typeof SandboxPricePathSchema>;

/** What `POST /prices` answers: a pin or a release, or a path's schedule. */
export const SandboxPriceAnswerSchema = Type.Union([SandboxPriceSchema, SandboxPricePathSchema]);

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
    stream: Type.Optional(StringEnum(SANDBOX_STREAMS, { description: 'stream-drop: whose WebSocket connections are dropped' })),
    mode: Type.Optional(StringEnum(SANDBOX_STREAM_DROP_MODES, { description: 'stream-drop: close with 1012 (default) or cut the socket' })),
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
  stream: Type.Optional(StringEnum(SANDBOX_STREAMS)),
  mode: Type.Optional(StringEnum(SANDBOX_STREAM_DROP_MODES)),
  closeCode: Type.Optional(Type.Integer({ description: 'stream-drop in close mode: the close frame\'s code (1012)' })),
  dropped: Type.Optional(
    Type.Record(Type.String(), Type.Integer(), { description: 'stream-drop: the connections it dropped, by API (`stock`, `perp`)' }),
  ),
});
export type SandboxFault = Static<typeof SandboxFaultSchema>;

export const SandboxFaultListSchema = Type.Object({ faults: Type.Array(SandboxFaultSchema) });
export type SandboxFaultList = Static<typeof SandboxFaultListSchema>;

export const SandboxFaultsClearedSchema = Type.Object({ cleared: Type.Array(SandboxFaultSchema) });
export type SandboxFaultsCleared = Static<typeof SandboxFaultsClearedSchema>;

// ------------------------------------------------------------------ corporate actions

export const SANDBOX_CORPORATE_ACTION_KINDS = ['split', 'dividend'] as const;

export const SandboxCorporateActionRequestSchema = Type.Object(
  {
    symbol: Type.String({ minLength: 1, maxLength: 32, description: 'a listed stock' }),
    kind: StringEnum(SANDBOX_CORPORATE_ACTION_KINDS),
    ratio: Type.Optional(Type.String({ maxLength: 16, description: 'split: new:old shares, e.g. "2:1"' })),
    amount: Type.Optional(Type.String({ maxLength: 32, description: 'dividend: cash per share, at most 8 decimal places' })),
    currency: Type.Optional(Type.String({ maxLength: 8, description: 'dividend: ISO 4217 code of the amount (default USD)' })),
    effective: Type.Optional(
      Type.String({ maxLength: 10, description: '`now` (default: today\'s ex-date, applied at once) or an ex-date YYYY-MM-DD (New York)' }),
    ),
    recordDate: Type.Optional(Type.String({ maxLength: 10, description: 'YYYY-MM-DD, not before the ex-date (default: the ex-date)' })),
  },
  { additionalProperties: false },
);
export type SandboxCorporateActionRequest = Static<typeof SandboxCorporateActionRequestSchema>;

export const SandboxCorporateActionSchema = Type.Object({
  actionId: Type.String({ description: 'SYMBOL-YYYY-MM-DD, as `tokex corporate-actions retry` takes it' }),
  applied: Type.Boolean({ description: 'whether the chain has it now (false: scheduled for a later ex-date)' }),
  action: StockCorporateActionSchema,
});
export type SandboxCorporateAction = Static<typeof SandboxCorporateActionSchema>;
