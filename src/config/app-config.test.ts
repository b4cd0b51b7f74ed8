import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './app-config.ts';

const OPERATOR = `0x${'11'.repeat(32)}` as const;
const EXECUTOR = `0x${'22'.repeat(32)}` as const;
const RELAYER = `0x${'33'.repeat(32)}` as const;

/** Asserts that `env` is refused and that the refusal does not name `secret`. */
function expectRefusalWithout(env: Parameters<typeof loadConfig>[0], secret: string): void {
  let message = '';
  try {
    loadConfig(env);
  } catch (err) {
    message = (err as Error).message;
  }
  expect(message).not.toBe('');
  expect(message).not.toContain(secret);
}

describe('app config', () => {
  it('SANDBOX_SEED: the simulator\'s seed with the sandbox on; refused without it or out of 32 bits', () => {
    expect(loadConfig({}).sandboxSeed).toBeUndefined();
    expect(loadConfig({ MARKETDATA_SEED: '7' }).marketDataSeed).toBe(7);
    const seeded = loadConfig({ SANDBOX_SEED: '4294967295', MARKETDATA_SEED: '7' });
    expect([seeded.sandboxSeed, seeded.marketDataSeed]).toEqual([4_294_967_295, 4_294_967_295]);
    expect(loadConfig({ SANDBOX_SEED: '0' }).sandboxSeed).toBe(0);
    expect(() => loadConfig({ SANDBOX_SEED: '1', SANDBOX: '0' })).toThrow('SANDBOX_SEED: only with the sandbox on (the embedded stack, or SANDBOX=1); unset SANDBOX_SEED');
    expect(() => loadConfig({ SANDBOX_SEED: '1', RPC_URL: 'http://127.0.0.1:8545' })).toThrow('SANDBOX_SEED: only with the sandbox on');
    expect(() => loadConfig({ SANDBOX_SEED: '4294967296' })).toThrow('SANDBOX_SEED: must be at most 4294967295');
    expect(() => loadConfig({ SANDBOX_SEED: '-1' })).toThrow('SANDBOX_SEED: must be an integer of at least 0');
    expect(() => loadConfig({ SANDBOX_SEED: 'abc' })).toThrow('SANDBOX_SEED: must be an integer of at least 0');
  });

  it("reads each sending role's own key and address beside the shared operator key", () => {
    const only = loadConfig({ OPERATOR_PRIVATE_KEY: OPERATOR });
    expect(only.operatorPrivateKey).toBe(OPERATOR);
    expect(only.roleKeys).toEqual({});
    const split = loadConfig({
      OPERATOR_PRIVATE_KEY: OPERATOR,
      EXECUTOR_PRIVATE_KEY: EXECUTOR,
      RELAYER_PRIVATE_KEY: RELAYER,
      PERP_OPERATOR_ADDRESS: '0x00000000000000000000000000000000000000aa',
    });
    expect(split.roleKeys).toEqual({ executor: EXECUTOR, relayer: RELAYER });
    expect(split.roleAddresses).toEqual({ 'perp-operator': '0x00000000000000000000000000000000000000AA' });
    expect(() => loadConfig({ RELAYER_ADDRESS: '0x1234' })).toThrow('RELAYER_ADDRESS: must be a 0x address of 40 hex digits');
  });

  it('refuses a malformed key naming the variable, never echoing the value', () => {
    const secretish = `0x${'ab'.repeat(31)}zz`;
    for (const name of ['OPERATOR_PRIVATE_KEY', 'EXECUTOR_PRIVATE_KEY', 'RELAYER_PRIVATE_KEY', 'PERP_OPERATOR_PRIVATE_KEY']) {
      let message = '';
      try {
        loadConfig({ [name]: secretish });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toBe(`${name}: must be 0x followed by 64 hex digits`);
    }
  });

  it('parses with the shared env helpers: choices, lists, booleans and integers', () => {
    const c = loadConfig({ MARKET_CALENDAR: 'nyse', TRUSTED_PROXIES: ' 10.0.0.1, ,::1 ', DEMO_MODE: 'false', STOCK_API_PORT: '0', EXECUTOR_TICK_MS: '250' });
    expect(c.marketCalendar).toBe('nyse');
    expect(c.trustedProxies).toEqual(['10.0.0.1', '::1']);
    expect(c.demoMode).toBe(false);
    expect(c.stockApiPort).toBe(0);
    expect(c.executor.tickMs).toBe(250);
    // Demo mode defaults to on for the embedded anvil only.
    expect(loadConfig({}).demoMode).toBe(true);
    expect(loadConfig({ RPC_URL: 'http://127.0.0.1:8545' }).demoMode).toBe(false);
    expect(() => loadConfig({ MARKET_CALENDAR: 'lse' })).toThrow('MARKET_CALENDAR: one of always-open, 24x5, nyse, us-sessions');
    expect(loadConfig({ MARKET_CALENDAR: 'us-sessions' }).marketCalendar).toBe('us-sessions');
    expect(() => loadConfig({ STOCK_API_PORT: '-1' })).toThrow(/STOCK_API_PORT/);
    expect(() => loadConfig({ DEMO_MODE: 'maybe' })).toThrow(/DEMO_MODE/);
    expect(() => loadConfig({ STOCK_API_PREFIX: 'stock' })).toThrow('STOCK_API_PREFIX: must start with /');
  });

  it('reads the perp indexer depth apart from the stock indexer’s', () => {
    expect(loadConfig({}).perp).toEqual({ confirmations: 0, marketMaker: true, demoTakerMs: 10_000, fundingIntervalMs: undefined, markIntervalMs: 1_000, fundingSampleMs: 5_000, lpLockupMs: 345_600_000, eventBuffer: 100_000, recentResults: 100_000, projector: 'auto', journalWriter: 'auto', engineEvents: false });
    expect(loadConfig({ PERP_ENGINE_EVENTS: 'on' }).perp.engineEvents).toBe(true);
    expect(loadConfig({ PERP_PROJECTOR: 'thread' }).perp.projector).toBe('thread');
    expect(() => loadConfig({ PERP_PROJECTOR: 'Worker' })).toThrow(/PERP_PROJECTOR/);
    expect(loadConfig({ PERP_JOURNAL_WRITER: 'thread' }).perp.journalWriter).toBe('thread');
    expect(() => loadConfig({ PERP_JOURNAL_WRITER: 'fast' })).toThrow(/PERP_JOURNAL_WRITER/);
    expect(loadConfig({ PERP_EVENT_BUFFER: '10000', PERP_RECENT_RESULTS: '20000' }).perp).toMatchObject({ eventBuffer: 10_000, recentResults: 20_000 });
    expect(() => loadConfig({ PERP_EVENT_BUFFER: '10' })).toThrow(/PERP_EVENT_BUFFER/);
    expect(loadConfig({ LEASE_TTL_MS: '2000' }).leaseTtlMs).toBe(2_000);
    expect(() => loadConfig({ LEASE_TTL_MS: '100' })).toThrow(/LEASE_TTL_MS/);
    expect(loadConfig({ RPC_URL: 'http://127.0.0.1:1' }).perp.marketMaker).toBe(false);
    expect(loadConfig({ PERP_FUNDING_INTERVAL_MS: '60000', PERP_MARKET_MAKER: 'false' }).perp).toMatchObject({ fundingIntervalMs: 60_000, marketMaker: false });
    const c = loadConfig({ PERP_CONFIRMATIONS: '12', INDEXER_CONFIRMATIONS: '3' });
    expect(c.perp.confirmations).toBe(12);
    expect(c.indexer.confirmations).toBe(3);
    expect(() => loadConfig({ PERP_CONFIRMATIONS: '-1' })).toThrow(/PERP_CONFIRMATIONS/);
  });

  it('reads the liquidity pool lock-up: 4 days by default, 0 to a year', () => {
    expect(loadConfig({}).perp.lpLockupMs).toBe(4 * 24 * 60 * 60 * 1_000);
    expect(loadConfig({ PERP_LP_LOCKUP_MS: '60000' }).perp.lpLockupMs).toBe(60_000);
    expect(loadConfig({ PERP_LP_LOCKUP_MS: '0' }).perp.lpLockupMs).toBe(0);
    expect(loadConfig({ PERP_LP_LOCKUP_MS: String(366 * 86_400_000) }).perp.lpLockupMs).toBe(31_622_400_000);
    expect(() => loadConfig({ PERP_LP_LOCKUP_MS: String(366 * 86_400_000 + 1) })).toThrow('PERP_LP_LOCKUP_MS: must be at most 31622400000');
    expect(() => loadConfig({ PERP_LP_LOCKUP_MS: '4d' })).toThrow(/PERP_LP_LOCKUP_MS/);
  });

  it('reads MASTER_KEY_PREVIOUS as a list of keys and refuses a malformed entry without echoing it', () => {
    const hex = '44'.repeat(32);
    const b64 = Buffer.alloc(32, 5).toString('base64');
    expect(loadConfig({}).masterKeyPrevious).toEqual([]);
    expect(loadConfig({ MASTER_KEY_PREVIOUS: ` ${hex} , ${b64},` }).masterKeyPrevious).toEqual([hex, b64]);
    const bad = 'ab'.repeat(31);
    let message = '';
    try {
      loadConfig({ MASTER_KEY_PREVIOUS: `${hex},${bad}` });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe('MASTER_KEY_PREVIOUS: entry 2 must be 32 bytes as hex or base64');
  });
  it('reads TOKEX_ENV and the TLS files: both of cert and key or neither, paths resolved', () => {
    const plain = loadConfig({});
    expect(plain.production).toBe(false);
    expect(plain.tls).toBeUndefined();
    expect(loadConfig({ TOKEX_ENV: 'production' }).production).toBe(true);
    expect(() => loadConfig({ TOKEX_ENV: 'prod' })).toThrow('TOKEX_ENV: one of development, production');
    const tls = loadConfig({ TLS_CERT_FILE: '/etc/tokex/cert.pem', TLS_KEY_FILE: 'key.pem', TLS_CA_FILE: '/etc/tokex/chain.pem' }).tls;
    expect(tls).toEqual({ certFile: '/etc/tokex/cert.pem', keyFile: path.resolve('key.pem'), caFile: '/etc/tokex/chain.pem' });
    expect(loadConfig({ TLS_CERT_FILE: '/c.pem', TLS_KEY_FILE: '/k.pem' }).tls).toEqual({ certFile: '/c.pem', keyFile: '/k.pem' });
    expect(() => loadConfig({ TLS_CERT_FILE: '/c.pem' })).toThrow('TLS_KEY_FILE: required with TLS_CERT_FILE');
    expect(() => loadConfig({ TLS_KEY_FILE: '/k.pem' })).toThrow('TLS_CERT_FILE: required with TLS_KEY_FILE');
    expect(() => loadConfig({ TLS_CA_FILE: '/ca.pem' })).toThrow('TLS_CA_FILE: needs TLS_CERT_FILE and TLS_KEY_FILE');
  });

  it('reads STOCK_SESSION_FLAGS per symbol, by the short names or the fields of GET symbols, and refuses what it cannot read', () => {
    expect(loadConfig({}).stockSessionFlags).toEqual({});
    expect(loadConfig({ STOCK_SESSION_FLAGS: ' tsla:overnight=false, fractionalEh=FALSE ; SPY:fractionable=false;NVDA:overnightTradable=true,fractionalEhEnabled=false;' }).stockSessionFlags).toEqual({
      TSLA: { overnightTradable: false, fractionalEhEnabled: false },
      SPY: { fractionable: false },
      NVDA: { overnightTradable: true, fractionalEhEnabled: false },
    });
    const hint = ' (e.g. TSLA:overnight=false,fractionalEh=false;SPY:fractionable=false)';
    expect(() => loadConfig({ STOCK_SESSION_FLAGS: 'TSLA' })).toThrow(`STOCK_SESSION_FLAGS: "TSLA" must be SYMBOL:flag=true|false${hint}`);
    expect(() => loadConfig({ STOCK_SESSION_FLAGS: 'TSLA:' })).toThrow(`STOCK_SESSION_FLAGS: TSLA names no flag${hint}`);
    expect(() => loadConfig({ STOCK_SESSION_FLAGS: 'TSLA:weekend=true' })).toThrow(
      `STOCK_SESSION_FLAGS: "weekend=true": the flags are overnight, fractionable and fractionalEh, each =true or =false${hint}`,
    );
    expect(() => loadConfig({ STOCK_SESSION_FLAGS: 'TSLA:overnight=no' })).toThrow(`STOCK_SESSION_FLAGS: TSLA overnight: must be true or false${hint}`);
    expect(() => loadConfig({ STOCK_SESSION_FLAGS: 'TSLA:overnight=false,overnightTradable=true' })).toThrow(`STOCK_SESSION_FLAGS: TSLA overnightTradable is given twice${hint}`);
    expect(() => loadConfig({ STOCK_SESSION_FLAGS: 'TSLA:overnight=false;tsla:fractionable=false' })).toThrow(`STOCK_SESSION_FLAGS: TSLA is given twice${hint}`);
    expect(() => loadConfig({ STOCK_SESSION_FLAGS: 'T SLA:overnight=false' })).toThrow(`STOCK_SESSION_FLAGS: "T SLA" is not a symbol${hint}`);
  });

  it('reads MARKET_CLOCK_START as an instant with its offset or Unix ms, never in production', () => {
    expect(loadConfig({}).marketClockStart).toBeUndefined();
    expect(loadConfig({ MARKET_CLOCK_START: '2026-03-10T08:00:00-04:00' }).marketClockStart).toBe(Date.UTC(2026, 2, 10, 12));
    expect(loadConfig({ MARKET_CLOCK_START: '2026-03-10T12:00:00Z' }).marketClockStart).toBe(Date.UTC(2026, 2, 10, 12));
    expect(loadConfig({ MARKET_CLOCK_START: String(Date.UTC(2026, 2, 10, 12)) }).marketClockStart).toBe(Date.UTC(2026, 2, 10, 12));
    const rule = 'MARKET_CLOCK_START: must be an ISO 8601 instant with its offset (2026-03-10T08:00:00-04:00) or Unix ms';
    // Without an offset the instant would depend on the machine's time zone.
    expect(() => loadConfig({ MARKET_CLOCK_START: '2026-03-10T08:00:00' })).toThrow(rule);
    expect(() => loadConfig({ MARKET_CLOCK_START: 'tomorrow' })).toThrow(rule);
    expect(() => loadConfig({ MARKET_CLOCK_START: '2026-02-30T08:00:00Z' })).toThrow(rule);
    expect(() => loadConfig({ MARKET_CLOCK_START: '2026-03-10T12:00:00Z', TOKEX_ENV: 'production' })).toThrow(
      'MARKET_CLOCK_START: not with TOKEX_ENV=production (it moves the trading calendar away from the real time)',
    );
  });

  it('reads QUOTE_SOURCE: the simulator by default; alpaca with its keys (the secret never serialised), feed, URL, symbol map and guard limits', () => {
    expect(loadConfig({}).quoteSource).toEqual({ kind: 'simulator', checks: [], requireAllSources: true, staleAfterMs: 30_000, maxDivergenceBps: 50, recoverAfterMs: 0, symbolMap: {} });
    // The stale limit follows the executor's quote max age unless set.
    expect(loadConfig({ EXECUTOR_QUOTE_MAX_AGE_MS: '5000' }).quoteSource.staleAfterMs).toBe(5_000);
    const secret = 'sk-live-0123456789abcdef';
    const c = loadConfig({
      QUOTE_SOURCE: 'alpaca',
      ALPACA_KEY_ID: 'PK123',
      ALPACA_SECRET_KEY: secret,
      ALPACA_FEED: 'sip',
      ALPACA_STREAM_URL: 'ws://127.0.0.1:9999/v2/sip',
      QUOTE_STALE_AFTER_MS: '4000',
      QUOTE_MAX_DIVERGENCE_BPS: '25',
      QUOTE_RECOVER_AFTER_MS: '2000',
      QUOTE_SYMBOL_MAP: ' brkb=BRK.B , GOOGL=googl',
    }).quoteSource;
    expect(c).toMatchObject({ kind: 'alpaca', staleAfterMs: 4_000, maxDivergenceBps: 25, recoverAfterMs: 2_000, symbolMap: { BRKB: 'BRK.B', GOOGL: 'GOOGL' } });
    expect(c.alpaca).toEqual({ keyId: 'PK123', feed: 'sip', streamUrl: 'ws://127.0.0.1:9999/v2/sip' });
    expect(c.alpaca!.secretKey).toBe(secret);
    const serialised = JSON.stringify(loadConfig({ QUOTE_SOURCE: 'alpaca', ALPACA_KEY_ID: 'PK123', ALPACA_SECRET_KEY: secret }), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
    expect(serialised).toContain('"keyId":"PK123"');
    expect(serialised).not.toContain(secret);
    expect(loadConfig({ QUOTE_SOURCE: 'alpaca', ALPACA_KEY_ID: 'PK123', ALPACA_SECRET_KEY: secret }).quoteSource.alpaca).toEqual({ keyId: 'PK123', feed: 'iex' });

    expect(() => loadConfig({ QUOTE_SOURCE: 'alpaca' })).toThrow('ALPACA_KEY_ID: required with QUOTE_SOURCE=alpaca (the API key id of the market-data account)');
    expect(() => loadConfig({ QUOTE_SOURCE: 'alpaca', ALPACA_KEY_ID: 'PK123' })).toThrow('ALPACA_SECRET_KEY: required with QUOTE_SOURCE=alpaca (the API secret key of the market-data account)');
    expect(() => loadConfig({ QUOTE_SOURCE: 'polygon' })).toThrow('QUOTE_SOURCE: one of simulator, alpaca');
    const alpaca = { QUOTE_SOURCE: 'alpaca', ALPACA_KEY_ID: 'PK123', ALPACA_SECRET_KEY: secret };
    expect(() => loadConfig({ ...alpaca, ALPACA_FEED: 'nasdaq' })).toThrow('ALPACA_FEED: one of iex, sip, delayed_sip, test');
    expect(() => loadConfig({ ...alpaca, ALPACA_STREAM_URL: 'https://stream.data.alpaca.markets/v2/iex' })).toThrow('ALPACA_STREAM_URL: must be a ws:// or wss:// URL');
    expect(() => loadConfig({ QUOTE_STALE_AFTER_MS: '0' })).toThrow('QUOTE_STALE_AFTER_MS: must be an integer of at least 1');
    expect(() => loadConfig({ QUOTE_MAX_DIVERGENCE_BPS: '-5' })).toThrow(/QUOTE_MAX_DIVERGENCE_BPS/);
    const hint = ' (e.g. BRKB=BRK.B,GOOGL=GOOGL)';
    expect(() => loadConfig({ QUOTE_SYMBOL_MAP: 'BRKB' })).toThrow(`QUOTE_SYMBOL_MAP: "BRKB" must be VENUE=PROVIDER${hint}`);
    expect(() => loadConfig({ QUOTE_SYMBOL_MAP: 'BRKB=BRK.B,brkb=BRK-B' })).toThrow(`QUOTE_SYMBOL_MAP: BRKB is given twice${hint}`);
    expect(() => loadConfig({ QUOTE_SYMBOL_MAP: 'BRKB=1BRK' })).toThrow(`QUOTE_SYMBOL_MAP: "1BRK" is not a ticker${hint}`);
    // No error names the secret's value.
    for (const env of [{ ...alpaca, ALPACA_FEED: 'x' }, { ...alpaca, ALPACA_STREAM_URL: secret }]) {
      expectRefusalWithout(env, secret);
    }
  });

  it('reads a check source after the primary (QUOTE_SOURCE=alpaca,pyth) with its key (never serialised), URL, feed ids and confidence limit', () => {
    const secret = 'sk-live-0123456789abcdef';
    const pythKey = 'pyth-key-fedcba9876543210';
    const aapl = '49f6b65cb1de6b10eaf75e7c03ca029c306d0357e91b5311b175084a5ad55688';
    const base = { QUOTE_SOURCE: 'alpaca, pyth', ALPACA_KEY_ID: 'PK123', ALPACA_SECRET_KEY: secret, PYTH_API_KEY: pythKey };
    const c = loadConfig({ ...base, PYTH_HERMES_URL: 'http://127.0.0.1:9998/hermes', PYTH_FEED_IDS: ` aapl=0x${aapl.toUpperCase()} `, PYTH_MAX_CONF_BPS: '40', QUOTE_REQUIRE_ALL_SOURCES: 'false' }).quoteSource;
    expect(c).toMatchObject({ kind: 'alpaca', checks: ['pyth'], requireAllSources: false });
    expect(c.pyth).toEqual({ hermesUrl: 'http://127.0.0.1:9998/hermes', feedIds: { AAPL: aapl }, maxConfBps: 40 });
    expect(c.pyth!.apiKey).toBe(pythKey);
    expect(loadConfig(base).quoteSource.pyth).toEqual({ feedIds: {}, maxConfBps: 100 });
    const serialised = JSON.stringify(loadConfig(base), (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
    expect(serialised).toContain('"checks":["pyth"]');
    expect(serialised).not.toContain(pythKey);
    expect(serialised).not.toContain(secret);
    expect(loadConfig({ QUOTE_SOURCE: 'alpaca', ALPACA_KEY_ID: 'PK123', ALPACA_SECRET_KEY: secret }).quoteSource).toMatchObject({ checks: [], requireAllSources: true });
    expect(loadConfig({ QUOTE_SOURCE: 'alpaca', ALPACA_KEY_ID: 'PK123', ALPACA_SECRET_KEY: secret }).quoteSource.pyth).toBeUndefined();

    expect(() => loadConfig({ ...base, PYTH_API_KEY: ' ' })).toThrow('PYTH_API_KEY: required with pyth in QUOTE_SOURCE');
    expect(() => loadConfig({ ...base, QUOTE_SOURCE: 'pyth' })).toThrow('QUOTE_SOURCE: pyth checks a primary source and cannot be one: name the primary first (alpaca,pyth)');
    expect(() => loadConfig({ ...base, QUOTE_SOURCE: 'pyth,alpaca' })).toThrow('QUOTE_SOURCE: pyth checks a primary source');
    expect(() => loadConfig({ ...base, QUOTE_SOURCE: 'alpaca,alpaca' })).toThrow('QUOTE_SOURCE: a source is named twice');
    expect(() => loadConfig({ ...base, QUOTE_SOURCE: 'alpaca,simulator' })).toThrow('QUOTE_SOURCE: simulator can only be the first (primary) source');
    expect(() => loadConfig({ ...base, QUOTE_SOURCE: 'simulator,pyth' })).toThrow('QUOTE_SOURCE: the simulator takes no check source');
    expect(() => loadConfig({ ...base, QUOTE_SOURCE: 'alpaca,' })).toThrow('QUOTE_SOURCE: one of simulator, alpaca');
    expect(() => loadConfig({ ...base, PYTH_HERMES_URL: 'wss://hermes' })).toThrow('PYTH_HERMES_URL: must be an http:// or https:// URL');
    expect(() => loadConfig({ ...base, PYTH_MAX_CONF_BPS: '10000' })).toThrow('PYTH_MAX_CONF_BPS: must be below 10000');
    expect(() => loadConfig({ ...base, QUOTE_REQUIRE_ALL_SOURCES: 'maybe' })).toThrow('QUOTE_REQUIRE_ALL_SOURCES: must be true or false');
    const hint = ` (e.g. AAPL=0x${aapl})`;
    expect(() => loadConfig({ ...base, PYTH_FEED_IDS: 'AAPL' })).toThrow(`PYTH_FEED_IDS: entry 1 must be VENUE=FEEDID${hint}`);
    expect(() => loadConfig({ ...base, PYTH_FEED_IDS: `AAPL=${aapl},1X=${aapl}` })).toThrow(`PYTH_FEED_IDS: entry 2 does not start with a symbol${hint}`);
    expect(() => loadConfig({ ...base, PYTH_FEED_IDS: 'AAPL=Equity.US.AAPL/USD' })).toThrow(`PYTH_FEED_IDS: the feed id of AAPL must be 64 hex digits${hint}`);
    expect(() => loadConfig({ ...base, PYTH_FEED_IDS: 'AAPL=0x1234' })).toThrow(`PYTH_FEED_IDS: the feed id of AAPL must be 64 hex digits${hint}`);
    expect(() => loadConfig({ ...base, PYTH_FEED_IDS: `AAPL=${aapl},aapl=${aapl}` })).toThrow(`PYTH_FEED_IDS: AAPL is given twice${hint}`);
    // No error names the key's value.
    for (const env of [{ ...base, PYTH_HERMES_URL: pythKey }, { ...base, PYTH_FEED_IDS: pythKey }, { ...base, PYTH_MAX_CONF_BPS: pythKey }]) {
      expectRefusalWithout(env, pythKey);
    }
  });
});

describe('app config: the chains served (EMBEDDED_CHAIN_IDS, STOCK_CHAINS)', () => {
  it('serves exactly one chain, CHAIN_ID on RPC_URL or the embedded anvil, with neither setting', () => {
    expect(loadConfig({}).stockChains).toEqual([{ chainId: 31337 }]);
    expect(loadConfig({ CHAIN_ID: '8453', RPC_URL: 'http://node:8545' }).stockChains).toEqual([{ chainId: 8453, rpcUrl: 'http://node:8545' }]);
    // An empty value is no setting, as with every other list.
    expect(loadConfig({ EMBEDDED_CHAIN_IDS: '' }).stockChains).toEqual([{ chainId: 31337 }]);
  });

  it('starts an embedded anvil per EMBEDDED_CHAIN_IDS entry, the first being CHAIN_ID (taken from the list when unset)', () => {
    const two = loadConfig({ EMBEDDED_CHAIN_IDS: '31337, 31338' });
    expect(two.chainId).toBe(31337);
    expect(two.stockChains).toEqual([{ chainId: 31337 }, { chainId: 31338 }]);
    const own = loadConfig({ EMBEDDED_CHAIN_IDS: '900,901,902' });
    expect(own.chainId).toBe(900);
    expect(own.stockChains.map((c) => c.chainId)).toEqual([900, 901, 902]);
    expect(loadConfig({ CHAIN_ID: '31337', EMBEDDED_CHAIN_IDS: '31337,31338' }).chainId).toBe(31337);
  });

  it('takes each external chain after the first from RPC_URL_<id> (STOCK_CHAINS)', () => {
    const cfg = loadConfig({ STOCK_CHAINS: '8453,1', RPC_URL: 'https://base.example', RPC_URL_1: 'https://eth.example' });
    expect(cfg.chainId).toBe(8453);
    expect(cfg.rpcUrl).toBe('https://base.example');
    expect(cfg.stockChains).toEqual([{ chainId: 8453, rpcUrl: 'https://base.example' }, { chainId: 1, rpcUrl: 'https://eth.example' }]);
  });

  it('refuses a bad chain list with a message naming the setting and the fix', () => {
    expect(() => loadConfig({ EMBEDDED_CHAIN_IDS: '31337,abc' })).toThrow('EMBEDDED_CHAIN_IDS: "abc" is not a chain id (a positive integer); expected e.g. 31337,31338');
    expect(() => loadConfig({ EMBEDDED_CHAIN_IDS: '31337,0' })).toThrow('EMBEDDED_CHAIN_IDS: "0" is not a chain id');
    expect(() => loadConfig({ EMBEDDED_CHAIN_IDS: '31337,,31338' })).toThrow('EMBEDDED_CHAIN_IDS: "" is not a chain id');
    expect(() => loadConfig({ EMBEDDED_CHAIN_IDS: '31337,31338,31337' })).toThrow('EMBEDDED_CHAIN_IDS: chain 31337 is listed twice');
    expect(() => loadConfig({ CHAIN_ID: '31337', EMBEDDED_CHAIN_IDS: '31338,31337' })).toThrow(
      'EMBEDDED_CHAIN_IDS: the first chain (31338) must be CHAIN_ID (31337): it keeps the data directory and database of a single-chain deployment',
    );
    expect(() => loadConfig({ EMBEDDED_CHAIN_IDS: '31337,31338', RPC_URL: 'http://node:8545' })).toThrow('EMBEDDED_CHAIN_IDS: not with RPC_URL');
    expect(() => loadConfig({ EMBEDDED_CHAIN_IDS: '31337', STOCK_CHAINS: '8453' })).toThrow('EMBEDDED_CHAIN_IDS and STOCK_CHAINS: set one of them');
    expect(() => loadConfig({ STOCK_CHAINS: '8453,1' })).toThrow('STOCK_CHAINS: the first chain (8453) needs RPC_URL');
    expect(() => loadConfig({ STOCK_CHAINS: '8453,1', RPC_URL: 'https://base.example' })).toThrow('STOCK_CHAINS: chain 1 needs RPC_URL_1');
    expect(() => loadConfig({ STOCK_CHAINS: '8453,1', RPC_URL: 'https://base.example', RPC_URL_1: 'eth.example' })).toThrow('RPC_URL_1: must be an http(s) or ws(s) URL');
  });
});
