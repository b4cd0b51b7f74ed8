import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Candle } from './market-types.ts';
import { DEMO_SYMBOLS, type SymbolSpec } from './symbol-catalog.ts';
import { centsToString, createGbmSource, spreadQuote, toCents } from './gbm-source.ts';
import { compareDecimal, createLiveCandleBook, rollupAll } from './candle-aggregator.ts';

const AAPL = DEMO_SYMBOLS.find((s) => s.symbol === 'AAPL')!;
const TSLA = DEMO_SYMBOLS.find((s) => s.symbol === 'TSLA')!;
const T0 = Date.UTC(2025, 2, 10, 14, 0);
const PRICE_RE = /^[1-9]\d*\.\d{2}$|^0\.(0[1-9]|[1-9]\d)$/;

function chain(source: ReturnType<typeof createGbmSource>, spec: SymbolSpec, start: number, minutes: number): Candle[] {
  const out: Candle[] = [];
  let prev = source.startPrice(spec);
  for (let i = 0; i < minutes; i++) {
    const c = source.minuteCandle(spec, start + i * 60_000, prev);
    out.push(c);
    prev = c.close;
  }
  return out;
}

describe('cents helpers', () => {
  it('parses and formats exactly', () => {
    expect(toCents('229.87')).toBe(22987);
    expect(toCents('229.8')).toBe(22980);
    expect(toCents('230')).toBe(23000);
    expect(toCents('229.875')).toBe(22988);
    expect(toCents('229.8749')).toBe(22987);
    expect(centsToString(22980)).toBe('229.80');
    expect(centsToString(5)).toBe('0.05');
    expect(centsToString(100)).toBe('1.00');
    expect(() => toCents('-1')).toThrow();
  });
});

describe('spreadQuote', () => {
  it('puts bid and ask half the spread around the mid, bid down and ask up to the cent', () => {
    // 229.87 × 2 bps = 0.045974 → bid 229.824026 → 229.82, ask 229.915974 → 229.92
    expect(spreadQuote('AAPL', 22987, 4, 5)).toEqual({ symbol: 'AAPL', bid: '229.82', ask: '229.92', last: '229.87', timestamp: 5 });
    // exact multiple: 100.00 × 10 bps half = 0.05 exactly
    expect(spreadQuote('X', 10000, 10, 0)).toMatchObject({ bid: '99.95', ask: '100.05' });
    expect(spreadQuote('X', 1, 0, 0)).toMatchObject({ bid: '0.01', ask: '0.02' });
    expect(spreadQuote('X', 5000, 0, 0)).toMatchObject({ bid: '50.00', ask: '50.01' });
  });

  it('always has 0 < bid < ask and bid <= mid <= ask (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000_000 }), fc.integer({ min: 0, max: 2_000 }), (mid, bps) => {
        const q = spreadQuote('X', mid, bps, 0);
        const bid = toCents(q.bid);
        const ask = toCents(q.ask);
        expect(bid).toBeGreaterThan(0);
        expect(bid).toBeLessThan(ask);
        if (bps > 0 && mid > 1) {
          expect(bid).toBeLessThanOrEqual(mid);
          expect(ask).toBeGreaterThanOrEqual(mid);
          // bid is the floor and ask the ceiling of mid ∓ mid·bps/20000
          const half = (BigInt(mid) * BigInt(bps));
          expect(BigInt(bid) * 20000n).toBeLessThanOrEqual(BigInt(mid) * 20000n - half);
          expect(BigInt(bid + 1) * 20000n).toBeGreaterThan(BigInt(mid) * 20000n - half);
          expect(BigInt(ask) * 20000n).toBeGreaterThanOrEqual(BigInt(mid) * 20000n + half);
          expect(BigInt(ask - 1) * 20000n).toBeLessThan(BigInt(mid) * 20000n + half);
        }
      }),
    );
  });
});

describe('createGbmSource', () => {
  it('is deterministic in (seed, symbol, minute, previous close)', () => {
    const a = createGbmSource({ seed: 42 });
    const b = createGbmSource({ seed: 42 });
    expect(a.minuteCandle(AAPL, T0, '229.87')).toEqual(b.minuteCandle(AAPL, T0, '229.87'));
    // Order of calls does not matter: each minute reseeds.
    const later = a.minuteCandle(AAPL, T0 + 60_000, '230.00');
    a.minuteCandle(TSLA, T0, '251.44');
    expect(a.minuteCandle(AAPL, T0 + 60_000, '230.00')).toEqual(later);
    expect(chain(a, AAPL, T0, 200)).toEqual(chain(b, AAPL, T0, 200));

    const c = createGbmSource({ seed: 43 });
    expect(chain(c, AAPL, T0, 200)).not.toEqual(chain(a, AAPL, T0, 200));
    // Another symbol or minute with the same inputs walks another path.
    expect(a.minuteCandle(TSLA, T0, '229.87').close).not.toBe(a.minuteCandle(AAPL, T0, '229.87').close);
  });

  it('pins the path of a known seed (a change to the generator shows here)', () => {
    const src = createGbmSource({ seed: 42 });
    const candles = chain(src, AAPL, T0, 3);
    expect(candles.map((c) => c.open)).toEqual(['229.87', candles[0].close, candles[1].close]);
    expect(candles.map((c) => [c.open, c.high, c.low, c.close, c.volume])).toEqual([
      ['229.87', '229.95', '229.79', '229.95', '23997'],
      ['229.95', '229.95', '229.84', '229.84', '21754'],
      ['229.84', '229.93', '229.80', '229.89', '21222'],
    ]);
  });

  it('with an origin, walks the same path from any start: the minutes count from the origin, not the epoch', () => {
    const day = 86_400_000;
    const fromT0 = createGbmSource({ seed: 42, origin: T0 });
    const fromLater = createGbmSource({ seed: 42, origin: T0 + 37 * day + 11 * 60_000 });
    const path = (src: ReturnType<typeof createGbmSource>, start: number) => chain(src, AAPL, start, 50).map((c) => [c.open, c.high, c.low, c.close, c.volume]);
    expect(path(fromLater, T0 + 37 * day + 11 * 60_000)).toEqual(path(fromT0, T0));
    // A tick inside the minute too: the same point of the same path.
    expect(fromLater.tick(AAPL, T0 + 37 * day + 11 * 60_000 + 30_500, '229.87').quote.last).toBe(fromT0.tick(AAPL, T0 + 30_500, '229.87').quote.last);
    // Origin 0 is the epoch's walk (the pinned path above); another origin another path.
    expect(path(createGbmSource({ seed: 42, origin: 0 }), T0)).toEqual(path(createGbmSource({ seed: 42 }), T0));
    expect(path(fromT0, T0 + 60_000)).not.toEqual(path(fromT0, T0));
    expect(() => createGbmSource({ seed: 42, origin: T0 + 1 })).toThrow('origin: must be a whole minute in ms');
  });

  it('gives consistent candles: cents, low <= open, close <= high, whole-share volume', () => {
    const src = createGbmSource({ seed: 'ohlc' });
    for (const spec of DEMO_SYMBOLS) {
      const candles = chain(src, spec, T0, 1_000);
      for (const c of candles) {
        for (const p of [c.open, c.high, c.low, c.close]) expect(p).toMatch(PRICE_RE);
        expect(compareDecimal(c.low, c.open)).toBeLessThanOrEqual(0);
        expect(compareDecimal(c.low, c.close)).toBeLessThanOrEqual(0);
        expect(compareDecimal(c.high, c.open)).toBeGreaterThanOrEqual(0);
        expect(compareDecimal(c.high, c.close)).toBeGreaterThanOrEqual(0);
        expect(c.volume).toMatch(/^[1-9]\d*$/);
      }
      for (let i = 1; i < candles.length; i++) expect(candles[i].open).toBe(candles[i - 1].close);
    }
  });

  it('moves with the configured volatility', () => {
    const src = createGbmSource({ seed: 7 });
    for (const spec of [AAPL, TSLA]) {
      const candles = chain(src, spec, T0, 20_000);
      const r = candles.map((c) => Math.log(Number(c.close) / Number(c.open)));
      const mean = r.reduce((s, x) => s + x, 0) / r.length;
      const sd = Math.sqrt(r.reduce((s, x) => s + (x - mean) ** 2, 0) / (r.length - 1));
      const expected = Number(spec.annualVolatility) * Math.sqrt(60_000 / (365.25 * 86_400_000));
      expect(sd / expected).toBeGreaterThan(0.93);
      expect(sd / expected).toBeLessThan(1.07);
    }
  });

  it('never quotes a price at or below zero', () => {
    const penny: SymbolSpec = { ...AAPL, symbol: 'PNY', startPrice: '0.02', annualVolatility: '40', spreadBps: 50 };
    const src = createGbmSource({ seed: 1 });
    let prev = '0.02';
    for (let i = 0; i < 500; i++) {
      const t = src.tick(penny, T0 + i * 60_000 + 30_000, prev);
      expect(toCents(t.candle.low)).toBeGreaterThanOrEqual(1);
      expect(toCents(t.quote.bid)).toBeGreaterThanOrEqual(1);
      expect(toCents(t.quote.bid)).toBeLessThan(toCents(t.quote.ask));
      prev = src.minuteCandle(penny, T0 + i * 60_000, prev).close;
    }
  });

  it('live ticks are the minute path cut at the tick time and end in the minute candle', () => {
    const src = createGbmSource({ seed: 42 });
    const full = src.minuteCandle(AAPL, T0, '229.87');
    let prevVolume = 0n;
    for (let ms = 0; ms < 60_000; ms += 1_000) {
      const t = src.tick(AAPL, T0 + ms + 400, '229.87');
      expect(t.candle.open).toBe('229.87');
      expect(t.quote.last).toBe(t.candle.close);
      expect(t.quote.timestamp).toBe(T0 + ms + 400);
      expect(compareDecimal(t.candle.high, full.high)).toBeLessThanOrEqual(0);
      expect(compareDecimal(t.candle.low, full.low)).toBeGreaterThanOrEqual(0);
      expect(BigInt(t.candle.volume)).toBeGreaterThan(prevVolume);
      prevVolume = BigInt(t.candle.volume);
      // Same tick time, same answer.
      expect(src.tick(AAPL, T0 + ms + 400, '229.87')).toEqual(t);
    }
    expect(src.tick(AAPL, T0 + 59_999, '229.87').candle).toEqual(full);
  });

  it('live ticks on a fake clock build exactly the candles history holds', () => {
    const src = createGbmSource({ seed: 'live' });
    const history = chain(src, TSLA, T0, 7);
    const book = createLiveCandleBook('TSLA');
    const latest = new Map<string, Candle>();
    let minute = T0;
    let prevClose = src.startPrice(TSLA);
    // A 1.7 s tick that never lands on the last point of some minutes: closing minutes must
    // still complete them in full.
    for (let now = T0 + 300; now < T0 + 7 * 60_000; now += 1_700) {
      const current = Math.floor(now / 60_000) * 60_000;
      while (minute < current) {
        const done = src.minuteCandle(TSLA, minute, prevClose);
        for (const c of book.completeMinute(done)) latest.set(`${c.interval}@${c.openTime}`, c);
        prevClose = done.close;
        minute += 60_000;
      }
      const t = src.tick(TSLA, now, prevClose);
      for (const c of book.updateMinute(t.candle)) latest.set(`${c.interval}@${c.openTime}`, c);
    }
    const last = src.minuteCandle(TSLA, minute, prevClose);
    for (const c of book.completeMinute(last)) latest.set(`${c.interval}@${c.openTime}`, c);

    const expected = [...history, ...rollupAll(history)];
    for (const c of expected) expect(latest.get(`${c.interval}@${c.openTime}`)).toEqual(c);
    expect(latest.size).toBe(expected.length);
  });

  it('rejects a step that does not divide the minute', () => {
    expect(() => createGbmSource({ seed: 1, stepMs: 7_000 })).toThrow(/stepMs/);
  });
});
