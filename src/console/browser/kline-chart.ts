/// <reference lib="dom" />
/**
 * The console's K-line chart: TradingView's `lightweight-charts` (bundled into the console's script
 * from node_modules, nothing fetched at run time), candles with the volume as a histogram in the
 * lower fifth. The page feeds it bars of either venue (stock history and `klines:<interval>`, perp
 * `GET klines` and `klines:<interval>`); the pixels come from numbers, the text beside the chart
 * keeps the APIs' exact strings. The library's own attribution logo injects a `<style>` element,
 * which the console's CSP (`style-src 'self'`) refuses: the page carries the attribution the
 * library's NOTICE asks for as a text link under the chart instead.
 */
import { CandlestickSeries, ColorType, createChart, HistogramSeries, type IChartApi, type ISeriesApi, type UTCTimestamp } from 'lightweight-charts';

export interface Candle {
  /** ms since the epoch, UTC-aligned. */
  openTime: number;
  open: string;
  high: string;
  low: string;
  close: string;
  volume?: string;
}

/** The intervals both venues' histories and `klines` streams serve. */
export const CHART_INTERVALS = ['1m', '5m', '15m', '1h', '4h', '1d'] as const;
export type ChartInterval = (typeof CHART_INTERVALS)[number];

/** How the chart's accessible name says an interval: `one-minute candles`. */
export const INTERVAL_WORDS: Record<ChartInterval, string> = {
  '1m': 'one-minute',
  '5m': 'five-minute',
  '15m': 'fifteen-minute',
  '1h': 'one-hour',
  '4h': 'four-hour',
  '1d': 'one-day',
};

const UP = '#1a7f37';
const DOWN = '#cf222e';
const MAX_BARS = 500;

export interface KlineChart {
  /** Replaces every bar (a new symbol or interval). */
  reset(bars: readonly Candle[]): void;
  /** A bar of the stream or a poll: the current one updated, or a new one. */
  upsert(bar: Candle): void;
  readonly bars: readonly Candle[];
}

export function createKlineChart(container: HTMLElement, priceDecimals: () => number): KlineChart {
  const dark = window.matchMedia?.('(prefers-color-scheme: dark)').matches ?? false;
  const chart: IChartApi = createChart(container, {
    autoSize: true,
    layout: { background: { type: ColorType.Solid, color: 'transparent' }, textColor: dark ? '#d0d7de' : '#24292f', attributionLogo: false },
    grid: { vertLines: { color: '#8882' }, horzLines: { color: '#8882' } },
    timeScale: { timeVisible: true, secondsVisible: false },
    rightPriceScale: { scaleMargins: { top: 0.08, bottom: 0.25 } },
  });
  const candles: ISeriesApi<'Candlestick'> = chart.addSeries(CandlestickSeries, {
    upColor: UP,
    downColor: DOWN,
    borderVisible: false,
    wickUpColor: UP,
    wickDownColor: DOWN,
  });
  const volume: ISeriesApi<'Histogram'> = chart.addSeries(HistogramSeries, { priceFormat: { type: 'volume' }, priceScaleId: 'volume', lastValueVisible: false, priceLineVisible: false });
  chart.priceScale('volume').applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });
  let bars: Candle[] = [];
  const time = (c: Candle) => Math.floor(c.openTime / 1000) as UTCTimestamp;
  const point = (c: Candle) => ({ time: time(c), open: Number(c.open), high: Number(c.high), low: Number(c.low), close: Number(c.close) });
  const vol = (c: Candle) => ({ time: time(c), value: Number(c.volume ?? 0), color: Number(c.close) >= Number(c.open) ? `${UP}80` : `${DOWN}80` });
  const precision = () => {
    const p = priceDecimals();
    candles.applyOptions({ priceFormat: { type: 'price', precision: p, minMove: 10 ** -p } });
  };
  return {
    get bars() {
      return bars;
    },
    reset(initial) {
      precision();
      const byTime = new Map<number, Candle>();
      for (const c of initial) byTime.set(c.openTime, c);
      bars = [...byTime.values()].sort((a, b) => a.openTime - b.openTime).slice(-MAX_BARS);
      candles.setData(bars.map(point));
      volume.setData(bars.map(vol));
      chart.timeScale().fitContent();
    },
    upsert(c) {
      const last = bars[bars.length - 1];
      if (last && c.openTime < last.openTime) {
        // An older bar (a poll's answer covering the previous candle): rewrite the series.
        const i = bars.findIndex((x) => x.openTime === c.openTime);
        if (i < 0) return;
        bars[i] = c;
        candles.setData(bars.map(point));
        volume.setData(bars.map(vol));
        return;
      }
      if (last && last.openTime === c.openTime) bars[bars.length - 1] = c;
      else bars = [...bars, c].slice(-MAX_BARS);
      candles.update(point(c));
      volume.update(vol(c));
    },
  };
}
