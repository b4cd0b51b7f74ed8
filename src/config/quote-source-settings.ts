/**
 * Where the stock quotes come from (`QUOTE_SOURCE`), parsed with the rest of the configuration so
 * that the config layer imports nothing above it; the marketdata role builds the source from these
 * (docs/market-data.md, "Quote sources"). The crypto indices of the perp venue stay simulated
 * whatever is chosen here.
 *
 * `QUOTE_SOURCE` names the primary (`alpaca`) and, after a comma, the sources that check it
 * (`alpaca,pyth`): the quote guard halts a symbol whose primary and check prices diverge.
 *
 * The Alpaca secret and the Pyth API key are non-enumerable properties: `JSON.stringify`, a spread
 * and a logger walking the configuration never see them. Error messages name variables, never values.
 */
import { AppError } from '../errors/app-error.ts';
import { envBool, envChoice, envInt, envString, type Env } from './env.ts';

export const QUOTE_SOURCES = ['simulator', 'alpaca'] as const;
export type QuoteSourceKind = (typeof QUOTE_SOURCES)[number];
/** Sources that only check the primary's prices: they may follow it in `QUOTE_SOURCE`, never lead. */
export const QUOTE_CHECK_SOURCES = ['pyth'] as const;
export type QuoteCheckSourceKind = (typeof QUOTE_CHECK_SOURCES)[number];

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

export interface PythSettings {
  /** `PYTH_API_KEY`: not enumerable (never serialised); sent only in the Authorization header. */
  readonly apiKey: string;
  /** `PYTH_HERMES_URL`, default the upgraded Hermes endpoint (`https://pyth.dourolabs.app/hermes`). */
  hermesUrl?: string;
  /** `PYTH_FEED_IDS`: venue symbol → feed id (64 hex digits), over the built-in ids of the demo stocks. */
  feedIds: Record<string, string>;
  /** `PYTH_MAX_CONF_BPS`, default 100: an update whose confidence interval is wider than this share of its price is refused. */
  maxConfBps: number;
}

export interface QuoteSourceSettings {
  /** The first source of `QUOTE_SOURCE` (the primary, whose prices are traded on); default `simulator`. */
  kind: QuoteSourceKind;
  /** The sources after it in `QUOTE_SOURCE` (`alpaca,pyth` → `['pyth']`): each checks the primary. */
  checks: QuoteCheckSourceKind[];
  /** Set when `kind` is `alpaca`. */
  alpaca?: AlpacaSettings;
  /** Set when `checks` has `pyth`. */
  pyth?: PythSettings;
  /**
   * `QUOTE_REQUIRE_ALL_SOURCES`, default true: a check source that is stale or has no data halts
   * the symbol too. False: it is then skipped (no divergence check) and only the primary must be fresh.
   */
  requireAllSources: boolean;
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

const FEED_ID = /^(?:0x)?([0-9a-fA-F]{64})$/;

/** `VENUE=FEEDID[,…]`: venue symbols upper-cased, feed ids as 64 lower-case hex digits (`0x` optional). */
export function parseFeedIdMap(raw: string | undefined, name = 'PYTH_FEED_IDS'): Record<string, string> {
  const out: Record<string, string> = {};
  if (raw === undefined) return out;
  const bad = (why: string) => new AppError('VALIDATION', `${name}: ${why} (e.g. AAPL=0x49f6b65cb1de6b10eaf75e7c03ca029c306d0357e91b5311b175084a5ad55688)`);
  // Entries are named by position, never echoed: a key pasted into the wrong variable stays unlogged.
  for (const [i, entry] of raw.split(',').map((e) => e.trim()).filter((e) => e !== '').entries()) {
    const m = /^([^=\s]+)\s*=\s*([^=\s]+)$/.exec(entry);
    if (!m) throw bad(`entry ${i + 1} must be VENUE=FEEDID`);
    const venue = m[1].toUpperCase();
    if (!TICKER.test(venue)) throw bad(`entry ${i + 1} does not start with a symbol`);
    const id = FEED_ID.exec(m[2]);
    if (id === null) throw bad(`the feed id of ${venue} must be 64 hex digits`);
    if (out[venue] !== undefined) throw bad(`${venue} is given twice`);
    out[venue] = id[1].toLowerCase();
  }
  return out;
}

/** `QUOTE_SOURCE`: `simulator` alone, or a primary followed by the check sources (`alpaca,pyth`). */
function parseQuoteSources(env: Env): { kind: QuoteSourceKind; checks: QuoteCheckSourceKind[] } {
  const raw = envString(env, 'QUOTE_SOURCE');
  if (raw === undefined) return { kind: 'simulator', checks: [] };
  const names = raw.split(',').map((s) => s.trim());
  const bad = (why: string) => new AppError('VALIDATION', `QUOTE_SOURCE: ${why}`);
  const all: readonly string[] = [...QUOTE_SOURCES, ...QUOTE_CHECK_SOURCES];
  for (const n of names) if (!all.includes(n)) throw bad(`one of ${QUOTE_SOURCES.join(', ')}, optionally followed by check sources (${QUOTE_CHECK_SOURCES.join(', ')}): alpaca,pyth`);
  if (new Set(names).size !== names.length) throw bad('a source is named twice');
  const [primary, ...rest] = names;
  if ((QUOTE_CHECK_SOURCES as readonly string[]).includes(primary)) {
    throw bad(`${primary} checks a primary source and cannot be one: name the primary first (alpaca,${primary})`);
  }
  if (primary === 'simulator' && rest.length > 0) throw bad('the simulator takes no check source');
  for (const r of rest) if (!(QUOTE_CHECK_SOURCES as readonly string[]).includes(r)) throw bad(`${r} can only be the first (primary) source`);
  return { kind: primary as QuoteSourceKind, checks: rest as QuoteCheckSourceKind[] };
}

export function loadQuoteSourceSettings(env: Env, defaults: { staleAfterMs: number }): QuoteSourceSettings {
  const { kind, checks } = parseQuoteSources(env);
  const settings: QuoteSourceSettings = {
    kind,
    checks,
    requireAllSources: envBool(env, 'QUOTE_REQUIRE_ALL_SOURCES', true),
    staleAfterMs: envInt(env, 'QUOTE_STALE_AFTER_MS', defaults.staleAfterMs, 1),
    maxDivergenceBps: envInt(env, 'QUOTE_MAX_DIVERGENCE_BPS', 50),
    recoverAfterMs: envInt(env, 'QUOTE_RECOVER_AFTER_MS', 0),
    symbolMap: parseSymbolMap(envString(env, 'QUOTE_SYMBOL_MAP')),
  };
  if (checks.includes('pyth')) settings.pyth = loadPythSettings(env);
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

function loadPythSettings(env: Env): PythSettings {
  const apiKey = envString(env, 'PYTH_API_KEY')?.trim();
  if (apiKey === undefined || apiKey === '') {
    throw new AppError('VALIDATION', 'PYTH_API_KEY: required with pyth in QUOTE_SOURCE (a Pyth API key from Pyth Terminal: Hermes needs one since the Pyth Core upgrade of 26 August 2026)');
  }
  const hermesUrl = envString(env, 'PYTH_HERMES_URL')?.trim();
  if (hermesUrl !== undefined && !/^https?:\/\/[^\s/]+/.test(hermesUrl)) throw new AppError('VALIDATION', 'PYTH_HERMES_URL: must be an http:// or https:// URL');
  const maxConfBps = envInt(env, 'PYTH_MAX_CONF_BPS', 100, 0);
  if (maxConfBps > 9_999) throw new AppError('VALIDATION', 'PYTH_MAX_CONF_BPS: must be below 10000 (a confidence interval as wide as the price)');
  const pyth = {
    ...(hermesUrl === undefined ? {} : { hermesUrl }),
    feedIds: parseFeedIdMap(envString(env, 'PYTH_FEED_IDS')),
    maxConfBps,
  } as PythSettings;
  Object.defineProperty(pyth, 'apiKey', { value: apiKey, enumerable: false, writable: false });
  return pyth;
}
