/// <reference lib="dom" />
/** The market side of the console: both markets lists, the perpetual book and tape, the mark line. */
import { formatAmount, formatStockPrice } from './amount-format.ts';
import { $, compareDecimal, el, fromScaled, isZero, toScaled, type Row } from './dom.ts';
import type { Freshness } from './freshness.ts';

export interface BookSide {
  bids: string[][];
  asks: string[][];
}

function symbolButton(symbol: string, onSelect: (s: string) => void): { th: HTMLElement; button: HTMLButtonElement } {
  const th = el('th');
  th.setAttribute('scope', 'row');
  const button = el('button', symbol) as HTMLButtonElement;
  button.type = 'button';
  button.setAttribute('aria-pressed', 'false');
  button.addEventListener('click', () => onSelect(symbol));
  th.append(button);
  return { th, button };
}

/** "Stock markets": every listed stock with its quote, at the quotes' cent. */
export function marketsView(symbols: string[], onSelect: (s: string) => void, freshness: Freshness) {
  const tbody = $('markets').querySelector('tbody')!;
  const cells = new Map<string, { button: HTMLButtonElement; last: HTMLElement; bid: HTMLElement; ask: HTMLElement; status: HTMLElement }>();
  for (const s of symbols) {
    const row = document.createElement('tr');
    const { th, button } = symbolButton(s, onSelect);
    const last = el('td', '—', 'price');
    last.dataset.symbol = s;
    const bid = el('td', '—');
    const ask = el('td', '—');
    const status = el('td', '');
    row.append(th, last, bid, ask, status);
    tbody.append(row);
    cells.set(s, { button, last, bid, ask, status });
  }
  const shown = new Map<string, Row>();
  /**
   * The status cell: the market status, the extended session when one is on (`open · pre-market`;
   * regular hours say nothing more), and `stale` while the symbol's quote is stale.
   */
  const renderStatus = (symbol: string) => {
    const c = cells.get(symbol);
    const q = shown.get(symbol);
    if (!c || !q) return;
    const stale = freshness.isStale(symbol);
    const extended = typeof q.session === 'string' && q.session !== 'regular' && q.session !== 'closed' ? ` · ${q.session}` : '';
    const text = `${q.marketStatus ?? ''}${extended}${stale ? ' · stale' : ''}`;
    if (c.status.textContent !== text) c.status.textContent = text;
    c.button.closest('tr')!.classList.toggle('stale', stale);
  };
  return {
    quote(q: Row | null) {
      const c = q && cells.get(q.symbol);
      if (!c) return;
      shown.set(q.symbol, q);
      freshness.note(q.symbol, Number(q.timestamp), q.stale === true);
      c.last.textContent = formatStockPrice(q.last);
      c.bid.textContent = formatStockPrice(q.bid);
      c.ask.textContent = formatStockPrice(q.ask);
      renderStatus(q.symbol);
    },
    /** The last quote shown of a symbol (the order form's estimate). */
    last(symbol: string): Row | undefined {
      return shown.get(symbol);
    },
    /** Ages move without any frame: re-judged every second. */
    refresh() {
      for (const symbol of shown.keys()) renderStatus(symbol);
    },
    select(s: string | undefined) {
      for (const [k, c] of cells) {
        c.button.setAttribute('aria-pressed', String(k === s));
        c.button.closest('tr')!.classList.toggle('selected', k === s);
      }
    },
  };
}

/** "Perpetual markets": each instrument with its mark and index, at its tick. */
export function perpMarketsView(symbols: string[], tickDecimals: (s: string) => number, onSelect: (s: string) => void) {
  const tbody = $('perp-markets').querySelector('tbody')!;
  const cells = new Map<string, { button: HTMLButtonElement; mark: HTMLElement; index: HTMLElement }>();
  for (const s of symbols) {
    const row = document.createElement('tr');
    const { th, button } = symbolButton(s, onSelect);
    const mark = el('td', '—');
    const index = el('td', '—');
    row.append(th, mark, index);
    tbody.append(row);
    cells.set(s, { button, mark, index });
  }
  return {
    ticker(t: Row | null) {
      const c = t && cells.get(t.symbol);
      if (!c) return;
      c.mark.textContent = formatAmount(t.markPrice, tickDecimals(t.symbol));
      c.index.textContent = formatAmount(t.indexPrice, tickDecimals(t.symbol));
    },
    select(s: string | undefined) {
      for (const [k, c] of cells) {
        c.button.setAttribute('aria-pressed', String(k === s));
        c.button.closest('tr')!.classList.toggle('selected', k === s);
      }
    },
  };
}

const BOOK_LEVELS = 10;
/** Cumulative sizes are summed exactly at this many places (every lot has fewer). */
const SIZE_SCALE = 12;

/**
 * "Order book": asks above (best lowest, nearest the middle), the spread and mid between, bids
 * below; each level with its cumulative size and a depth bar of that total's share of the larger
 * side's (the CSS custom property `--depth`, set through the CSSOM, which the page's CSP allows).
 */
export function bookView(priceDecimals: () => number) {
  const bids = new Map<string, string>();
  const asks = new Map<string, string>();
  const tbody = $('book').querySelector('tbody')!;
  const apply = (side: Map<string, string>, levels: string[][] = []) => {
    for (const [price, size] of levels) {
      if (isZero(size)) side.delete(price);
      else side.set(price, size);
    }
  };
  const levelsOf = (rows: Array<[string, string]>) => {
    let total = 0n;
    return rows.map(([p, s]) => {
      total += toScaled(s, SIZE_SCALE);
      return { price: p, size: s, total };
    });
  };
  const render = () => {
    const p = priceDecimals();
    const a = levelsOf([...asks].sort((x, y) => compareDecimal(x[0], y[0])).slice(0, BOOK_LEVELS));
    const b = levelsOf([...bids].sort((x, y) => compareDecimal(y[0], x[0])).slice(0, BOOK_LEVELS));
    const max = [...a, ...b].reduce((m, l) => (l.total > m ? l.total : m), 0n);
    const row = (l: { price: string; size: string; total: bigint }, side: 'bid' | 'ask') => {
      const tr = document.createElement('tr');
      tr.className = `level ${side}`;
      tr.dataset.price = l.price;
      const total = fromScaled(l.total, SIZE_SCALE).replace(/\.?0+$/, '');
      tr.append(el('td', side, side), el('td', formatAmount(l.price, p), side), el('td', l.size), el('td', total));
      const share = max > 0n ? Number((l.total * 10_000n) / max) / 100 : 0;
      tr.style.setProperty('--depth', `${share}%`);
      return tr;
    };
    const spread = document.createElement('tr');
    spread.className = 'spread';
    const cell = el('td') as HTMLTableCellElement;
    cell.colSpan = 4;
    const bestAsk = a[0]?.price;
    const bestBid = b[0]?.price;
    if (bestAsk !== undefined && bestBid !== undefined) {
      // Exact: both at the tick's places, the mid at one more (half a tick).
      const scale = p + 1;
      const ask = toScaled(bestAsk, scale);
      const bid = toScaled(bestBid, scale);
      const gap = ask - bid;
      const mid = (ask + bid) / 2n;
      const bps = mid > 0n ? Number((gap * 1_000_000n) / mid) / 100 : 0;
      cell.textContent = `Spread ${formatAmount(fromScaled(gap, scale), p)} (${bps.toFixed(2)} bps) · mid ${fromScaled(mid, scale)}`;
    } else cell.textContent = 'Spread — (one side empty)';
    spread.append(cell);
    tbody.replaceChildren(...[...a].reverse().map((l) => row(l, 'ask')), spread, ...b.map((l) => row(l, 'bid')));
  };
  return {
    snapshot(d: BookSide) {
      bids.clear();
      asks.clear();
      apply(bids, d.bids);
      apply(asks, d.asks);
      render();
    },
    update(d: Partial<BookSide>) {
      apply(bids, d.bids);
      apply(asks, d.asks);
      render();
    },
    clear() {
      bids.clear();
      asks.clear();
      render();
    },
  };
}

/** "Trades": the chosen perpetual market's tape, newest first, times in UTC. */
export function tradesView(priceDecimals: () => number) {
  let trades: Row[] = [];
  const tbody = $('trades').querySelector('tbody')!;
  const render = () => {
    tbody.replaceChildren(
      ...trades.slice(0, 30).map((t) => {
        const tr = document.createElement('tr');
        tr.className = 'trade';
        tr.dataset.tradeId = String(t.id);
        const side = String(t.side ?? '').toLowerCase();
        const time = new Date(Number(t.ts)).toISOString().slice(11, 19);
        tr.append(el('td', time), el('td', t.side, side), el('td', formatAmount(t.price, priceDecimals()), side), el('td', t.size));
        return tr;
      }),
    );
  };
  return {
    snapshot(rows: Row[] | null) {
      trades = [...(rows ?? [])];
      render();
    },
    add(t: Row) {
      trades = [t, ...trades.filter((x) => x.id !== t.id)].slice(0, 60);
      render();
    },
  };
}

/** The chosen market's mark and index, `stale` while the index's own time stands still. */
export function perpPricesView(freshness: Freshness, priceDecimals: () => number) {
  const line = $('perp-prices');
  let symbol = '';
  let last: Row | null = null;
  const name = (s: string) => `${s} index`;
  const render = () => {
    if (!last) {
      line.textContent = '';
      return;
    }
    const stale = freshness.isStale(name(symbol));
    const p = priceDecimals();
    const text = `Mark ${formatAmount(last.markPrice, p)} · index ${formatAmount(last.indexPrice, p)}${stale ? ' · stale' : ''}`;
    if (line.textContent !== text) line.textContent = text;
    line.classList.toggle('stale', stale);
  };
  return {
    reset(s: string) {
      if (symbol) freshness.forget(name(symbol));
      symbol = s;
      last = null;
      render();
    },
    ticker(t: Row | null) {
      if (!t || t.symbol !== symbol) return;
      last = t;
      freshness.note(name(symbol), t.indexTime ?? null, t.stale === true);
      render();
    },
    /** The chosen market's last ticker (the order form's estimate). */
    get last() {
      return last;
    },
    refresh: render,
  };
}
