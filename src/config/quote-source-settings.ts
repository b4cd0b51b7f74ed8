/**
 * Where the stock quotes come from (`QUOTE_SOURCE`), parsed with the rest of the configuration so
 * that the config layer imports nothing above it; the marketdata role builds the source from these
 * (docs/market-data.md, "Quote sources"). The crypto indices of the perp venue stay simulated
 * whatever is chosen here.
 *
 * The Alpaca secret is a non-enumerable property: `JSON.stringify`, a spread and a logger walking
 * the configuration never see it. Error messages name variables, never values.
 */
import { AppError } from '../errors/app-error.ts';
import { envChoice, envInt, envString, type Env } from './env.ts';

export const QUOTE_SOURCES = ['simulator', 'alpaca'] as const;
export type QuoteSourceKind = (typeof QUOTE_SOURCES)[number];

export const ALPACA_FEED_NAMES = ['iex', 'sip', 'delayed_sip', 'test'] as const;
export type AlpacaFeedName = (typeof ALPACA_FEED_NAMES)[number];

export interface AlpacaSettings {
  /** `ALPACA_KEY_ID`. */
  keyId: string;
  /** `ALPACA_SECRET_KEY`: not enumerable (never serialised); sent only in the stream's auth message. */
  readonly secretKey: string;
  /** `ALPACA_FEED`, default `iex` (the free plan's). */
  feed: AlpacaFeedName;
  /** `ALPACA_STREAM_URL`: overrides `wss://stream.data.alpaca.markets/v2/<feed>` (tests, proxies). */
  streamUrl?: string;
}

export interface QuoteSourceSettings {
  /** `QUOTE_SOURCE`, default `simulator`. */
  kind: QuoteSourceKind;
  /** Set when `kind` is `alpaca`. */
  alpaca?: AlpacaSettings;
  /**
   * `QUOTE_STALE_AFTER_MS`: a live symbol with no accepted quote for longer, while its session is
   * open, is halted as stale. Default `EXECUTOR_QUOTE_MAX_AGE_MS` (30 000), so the guard's `stale`,
   * the API's `stale`, the executor's refusal and the perp index's staleness begin together.
   */
  staleAfterMs: number;
  /** `QUOTE_MAX_DIVERGENCE_BPS`, default 50: the primary's mid against a check source's (with one source, unused). */
  maxDivergenceBps: number;
  /** `QUOTE_RECOVER_AFTER_MS`, default 0: a halt lifts only after its causes have been clear this long. */
  recoverAfterMs: number;
  /** `QUOTE_SYMBOL_MAP`: venue symbol → provider ticker where they differ (`BRKB=BRK.B`). */
  symbolMap: Record<string, string>;
}

const TICKER = /^[A-Z][A-Z0-9./-]{0,20}$/;

/** `VENUE=PROVIDER[,VENUE=PROVIDER…]`, both upper-cased; each venue symbol once. */
export function parseSymbolMap(raw: string | undefined, name = 'QUOTE_SYMBOL_MAP'): Record<string, string> {
  const out: Record<string, string> = {};
  if (raw === undefined) return out;
  const bad = (why: string) => new AppError('VALIDATION', `${name}: ${why} (e.g. BRKB=BRK.B,GOOGL=GOOGL)`);
  for (const entry of raw.split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const m = /^([^=\s]+)\s*=\s*([^=\s]+)$/.exec(entry);
    if (!m) throw bad(`${JSON.stringify(entry)} must be VENUE=PROVIDER`);
    const venue = m[1].toUpperCase();
    const provider = m[2].toUpperCase();
    if (!TICKER.test(venue)) throw bad(`${JSON.stringify(m[1])} is not a symbol`);
    if (!TICKER.test(provider)) throw bad(`${JSON.stringify(m[2])} is not a ticker`);
    if (out[venue] !== undefined) throw bad(`${venue} is given twice`);
    out[venue] = provider;
  }
  return out;
}

export function loadQuoteSourceSettings(env: Env, defaults: { staleAfterMs: number }): QuoteSourceSettings {
  const kind = envChoice(env, 'QUOTE_SOURCE', QUOTE_SOURCES, 'simulator');
  const settings: QuoteSourceSettings = {
    kind,
    staleAfterMs: envInt(env, 'QUOTE_STALE_AFTER_MS', defaults.staleAfterMs, 1),
    maxDivergenceBps: envInt(env, 'QUOTE_MAX_DIVERGENCE_BPS', 50),
    recoverAfterMs: envInt(env, 'QUOTE_RECOVER_AFTER_MS', 0),
    symbolMap: parseSymbolMap(envString(env, 'QUOTE_SYMBOL_MAP')),
  };
  if (kind !== 'alpaca') return settings;
  const keyId = envString(env, 'ALPACA_KEY_ID')?.trim();
  if (keyId === undefined || keyId === '') throw new AppError('VALIDATION', 'ALPACA_KEY_ID: required with QUOTE_SOURCE=alpaca (the API key id of the market-data account)');
  const secretKey = envString(env, 'ALPACA_SECRET_KEY')?.trim();
  if (secretKey === undefined || secretKey === '') throw new AppError('VALIDATION', 'ALPACA_SECRET_KEY: required with QUOTE_SOURCE=alpaca (the API secret key of the market-data account)');
  const streamUrl = envString(env, 'ALPACA_STREAM_URL')?.trim();
  if (streamUrl !== undefined && !/^wss?:\/\/[^\s/]+/.test(streamUrl)) throw new AppError('VALIDATION', 'ALPACA_STREAM_URL: must be a ws:// or wss:// URL');
  const alpaca = {
    keyId,
    feed: envChoice(env, 'ALPACA_FEED', ALPACA_FEED_NAMES, 'iex'),
    ...(streamUrl === undefined ? {} : { streamUrl }),
  } as AlpacaSettings;
  Object.defineProperty(alpaca, 'secretKey', { value: secretKey, enumerable: false, writable: false });
  settings.alpaca = alpaca;
  return settings;
}
