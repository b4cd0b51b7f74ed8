/// <reference lib="dom" />
/**
 * The account side of the console: balances (locked amounts as locked), the open orders of both
 * venues with their actions, positions, and the history of both venues' orders. Every amount at its
 * token's display precision (amount-format.ts).
 */
import { isTriggerType, OPEN_ORDER_STATUSES } from '@tokex/contract';
import { DISPLAY_DECIMALS, formatAmount, formatCash, formatShares, formatStockPrice } from './amount-format.ts';
import { $, actionButton, el, fromScaled, isoTime, isZero, toScaled, type Row } from './dom.ts';

/** Waiting triggers (UNTRIGGERED) as well as resting orders. */
const OPEN: ReadonlySet<string> = new Set(OPEN_ORDER_STATUSES);
/** The statuses an amendment applies to: a waiting trigger cannot be amended (its trigger was signed). */
const AMENDABLE: ReadonlySet<string> = new Set(['NEW', 'PARTIALLY_FILLED']);

/** A perp order in a sentence, for the status line: what it does, at what price, on what trigger. */
export function describeOrder(o: Row): string {
  const what = o.closePosition === true ? `${o.side} ${o.symbol} closing the position` : `${o.side} ${o.size} ${o.symbol}`;
  const type = String(o.type ?? 'LIMIT');
  const at = o.price !== null && o.price !== undefined ? `at ${o.price}` : 'at market';
  if (!isTriggerType(type)) return `${what} ${at}`;
  return `${what}, ${type} ${at} when ${o.triggerBy} reaches ${o.triggerPrice}`;
}

/** Cancel for the order `id` (`what` names it to assistive technology); disabled once pressed, so it is sent once. */
function cancelButton(what: string, id: string, onCancel: (orderId: string) => void): HTMLButtonElement {
  return actionButton('Cancel', what, (b) => {
    b.disabled = true;
    onCancel(id);
  });
}

/** "Open orders": the perpetual orders open, waiting triggers included, with Amend and Cancel. */
export function ordersView(priceDecimals: (symbol: string) => number, onCancel: (orderId: string) => void, onAmend: (order: Row) => void) {
  const orders = new Map<string, Row>();
  const tbody = $('open-orders').querySelector('tbody')!;
  const render = () => {
    tbody.replaceChildren(
      ...[...orders.values()].map((o) => {
        const tr = document.createElement('tr');
        const id = String(o.orderId);
        tr.dataset.orderId = id;
        const p = priceDecimals(o.symbol);
        const trigger = o.triggerPrice ? `${formatAmount(o.triggerPrice, p)} (${o.triggerBy})` : '';
        const size = o.closePosition === true ? 'position' : o.size;
        const price = o.price === null || o.price === undefined ? '' : formatAmount(o.price, p);
        tr.append(
          el('td', id), el('td', o.symbol), el('td', o.side, String(o.side).toLowerCase()), el('td', o.type ?? 'LIMIT'), el('td', price), el('td', trigger),
          el('td', size), el('td', o.filledSize ?? '0'), el('td', o.status),
        );
        const actions = el('td');
        if (AMENDABLE.has(o.status)) actions.append(actionButton('Amend', `order ${id}`, () => onAmend(o)));
        actions.append(cancelButton(`order ${id}`, id, onCancel));
        tr.append(actions);
        return tr;
      }),
    );
  };
  return {
    snapshot(rows: Row[] | null) {
      orders.clear();
      for (const o of rows ?? []) orders.set(String(o.orderId), o);
      render();
    },
    /** Answers whether the order left the open ones. */
    upsert(o: Row): boolean {
      const id = String(o.orderId);
      const was = orders.has(id);
      if (OPEN.has(o.status)) orders.set(id, o);
      else orders.delete(id);
      render();
      return was && !orders.has(id);
    },
  };
}

/** "Stock orders": the stock venue's open orders (`open` and `canceling`), the lock of each, Cancel on a limit order. */
export function stockOrdersView(onCancel: (orderId: string) => void) {
  const orders = new Map<string, Row>();
  const tbody = $('stock-orders').querySelector('tbody')!;
  const render = () => {
    tbody.replaceChildren(
      ...[...orders.values()]
        .sort((a, b) => Number(b.createdAt ?? 0) - Number(a.createdAt ?? 0))
        .map((o) => {
          const tr = document.createElement('tr');
          const id = String(o.orderId);
          tr.dataset.orderId = id;
          const buy = String(o.side).toLowerCase() === 'buy';
          const open = o.openOrder ?? {};
          // A buy locks mUSD, a sell the shares.
          const locked = buy ? `${formatCash(open.lockedAmount)} mUSD` : `${formatShares(open.lockedAmount)} ${o.symbol}`;
          const amount = o.quantity ? formatShares(o.quantity) : o.notional ? `${formatCash(o.notional)} mUSD` : '';
          tr.append(
            el('td', id), el('td', o.symbol ?? ''), el('td', o.side, buy ? 'buy' : 'sell'), el('td', o.type), el('td', amount),
            el('td', o.price ? formatStockPrice(o.price) : 'market'), el('td', formatShares(open.filledQuantity ?? '0')), el('td', locked),
            el('td', o.state === 'canceling' ? 'CANCELING' : (open.status ?? o.status)),
          );
          const actions = el('td');
          if (String(o.type).toLowerCase() === 'limit' && o.state === 'open') {
            actions.append(cancelButton(`stock order ${id}`, id, onCancel));
          }
          tr.append(actions);
          return tr;
        }),
    );
  };
  return {
    snapshot(rows: Row[] | null) {
      orders.clear();
      for (const o of rows ?? []) if (o.state !== 'history') orders.set(String(o.orderId), o);
      render();
    },
    /** Answers whether the order left the open ones. */
    upsert(o: Row): boolean {
      const id = String(o.orderId);
      const was = orders.has(id);
      if (o.state === 'history') orders.delete(id);
      else orders.set(id, o);
      render();
      return was && !orders.has(id);
    },
    has(orderId: string): boolean {
      return orders.has(orderId);
    },
  };
}

/** "Positions": entry, mark, unrealised PnL, leverage and liquidation price of each open position. */
export function positionsView(priceDecimals: (symbol: string) => number) {
  const positions = new Map<string, Row>();
  const tbody = $('positions').querySelector('tbody')!;
  const render = () => {
    tbody.replaceChildren(
      ...[...positions.values()].map((p) => {
        const tr = document.createElement('tr');
        const d = priceDecimals(p.symbol);
        const pnl = p.unrealisedPnl ?? p.unrealizedPnl;
        const pnlCell = el('td', formatCash(pnl), String(pnl ?? '').startsWith('-') ? 'sell' : 'buy');
        tr.append(
          el('td', p.symbol), el('td', p.side, String(p.side) === 'LONG' ? 'buy' : 'sell'), el('td', p.size), el('td', formatAmount(p.entryPrice, d)), el('td', formatAmount(p.markPrice, d)),
          pnlCell, el('td', p.leverage === undefined || p.leverage === null ? '—' : `${formatAmount(p.leverage, 2)}×`), el('td', formatAmount(p.liquidationPrice, d)),
        );
        return tr;
      }),
    );
  };
  const set = (p: Row) => {
    if (isZero(p.size)) positions.delete(p.symbol);
    else positions.set(p.symbol, p);
  };
  return {
    snapshot(rows: Row[] | null) {
      positions.clear();
      (rows ?? []).forEach(set);
      render();
    },
    upsert(p: Row) {
      set(p);
      render();
    },
  };
}

/**
 * "Balances": the stock wallet's cash and shares, the stock exchange's mUSD and shares with what
 * open orders lock (`Locked`; `Total` = available + locked), the perp margin account.
 */
export function balancesView() {
  const tbody = $('balances').querySelector('tbody')!;
  let perp: Row | undefined;
  let stock: Row | undefined;
  const SHARES = 18;
  const render = () => {
    const rows: Array<{ cells: [string, string, string, string, string]; asset: string }> = [];
    for (const c of (stock?.cashTokenBalances ?? []) as Row[]) rows.push({ asset: c.symbol, cells: ['Stock wallet', c.symbol, formatCash(c.walletBalance), formatCash(c.walletBalance), formatCash('0')] });
    // tokex's mUSD figures are `mUsdDetail`; `mUsdBalance` is Anchored's string (the available amount).
    const m = stock?.mUsdDetail;
    if (m) rows.push({ asset: 'mUSD', cells: ['Stock exchange', 'mUSD', formatCash(m.total), formatCash(m.available), formatCash(m.locked)] });
    // The cash tokens are listed too (isStock false), as Anchored lists them: shown above from cashTokenBalances.
    for (const t of ((stock?.tokenBalances ?? []) as Row[]).filter((r) => r.isStock !== false)) {
      if (!isZero(t.walletBalance)) rows.push({ asset: t.symbol, cells: ['Stock wallet', t.symbol, formatShares(t.walletBalance), formatShares(t.walletBalance), formatShares('0')] });
      if (!isZero(t.exchangeBalance) || !isZero(t.lockedExchangeBalance)) {
        // exchangeBalance is what is free; lockedExchangeBalance what open sells hold.
        const total = fromScaled(toScaled(String(t.exchangeBalance ?? '0'), SHARES) + toScaled(String(t.lockedExchangeBalance ?? '0'), SHARES), SHARES);
        rows.push({ asset: t.symbol, cells: ['Stock exchange', t.symbol, formatShares(total), formatShares(t.exchangeBalance), formatShares(t.lockedExchangeBalance)] });
      }
    }
    if (perp) {
      // Locked: the initial margin of positions and what open orders reserve.
      const used = fromScaled(toScaled(String(perp.orderMargin ?? '0'), 18) + toScaled(String(perp.positionMargin ?? '0'), 18), 18);
      rows.push({ asset: 'USDC', cells: ['Perp margin', 'USDC', formatCash(perp.balance), formatCash(perp.freeCollateral), formatCash(used)] });
      rows.push({ asset: 'USDC', cells: ['Perp equity', 'USDC', formatCash(perp.equity), '', ''] });
    }
    tbody.replaceChildren(
      ...rows.map(({ cells }) => {
        const tr = document.createElement('tr');
        for (const c of cells) tr.append(el('td', c));
        return tr;
      }),
    );
  };
  return {
    stock(b: Row | null) {
      if (b) stock = b;
      render();
    },
    perp(a: Row | null) {
      if (a) perp = a;
      render();
    },
    /** mUSD available on the stock exchange, exact (the order form's deposit decision). */
    get stockBalance(): Row | undefined {
      return stock;
    },
  };
}

/** "History": the orders of both venues that are done, newest first. */
export function historyView(priceDecimals: (symbol: string) => number) {
  let stock: Row[] = [];
  let perp: Row[] = [];
  const tbody = $('history').querySelector('tbody')!;
  const render = () => {
    const rows = [
      ...stock.map((o) => {
        const h = o.history ?? {};
        const amount = o.quantity ? `${formatShares(o.quantity)} shares` : o.notional ? `${formatCash(o.notional)} mUSD` : '';
        return { time: Number(h.settledAt ?? o.updatedAt ?? 0), cells: ['Stock', String(o.orderId), o.symbol ?? '', o.side, o.type, amount, h.averagePrice ? formatStockPrice(h.averagePrice) : '—', h.status ?? o.status] };
      }),
      ...perp.map((o) => {
        const d = priceDecimals(o.symbol);
        const avg = o.avgPrice;
        return { time: Number(o.updatedAt ?? o.createdAt ?? 0), cells: ['Perpetual', String(o.orderId), o.symbol, o.side, o.type ?? 'LIMIT', String(o.closePosition === true ? 'position' : o.size), avg ? formatAmount(avg, d) : '—', o.status] };
      }),
    ].sort((a, b) => b.time - a.time);
    tbody.replaceChildren(
      ...rows.slice(0, 40).map((r) => {
        const tr = document.createElement('tr');
        tr.dataset.orderId = r.cells[1];
        tr.dataset.venue = r.cells[0];
        tr.append(el('td', isoTime(r.time)), ...r.cells.map((c) => el('td', c)));
        return tr;
      }),
    );
  };
  return {
    stock(rows: Row[] | null) {
      stock = rows ?? [];
      render();
    },
    perp(rows: Row[] | null) {
      perp = rows ?? [];
      render();
    },
  };
}

export { DISPLAY_DECIMALS };
