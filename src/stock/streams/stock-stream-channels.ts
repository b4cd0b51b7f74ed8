/**
 * The stock venue's channels (contract.md §C, docs/streams.md): `quotes`, `klines:<interval>` and
 * `corporateActions` per symbol; `orders`, `operations` and `balances` per wallet, after `auth`. Each
 * data object is the REST body of the same thing (`GET prices/{symbol}`, the history's candles,
 * `GET corporate-action` rows, `GET orders/{id}`, the operation detail, `GET users/{id}/balance`).
 */
import { STOCK_KLINE_INTERVALS } from '@tokex/contract';
import { channelCatalog, type ChannelCatalog, type ChannelSpec } from '../../streams/stream-channels.ts';
import { keyedModel, latestModel, recentModel, type ModelFactory } from '../../streams/stream-model.ts';

export const RECENT_OPERATIONS = 50;

/**
 * The private streams' subject of an API key bound to no wallet (what it recorded); a bound key's
 * is its wallet's lower-case address.
 */
export const keySubject = (apiKey: string): string => `key:${apiKey}`;

export const CORPORATE_ACTIONS_CHANNEL = 'corporateActions';

/**
 * A symbol's `GET corporate-action` rows, one per ex-date (the table's key with the symbol), in the
 * route's order, newest ex-date first: an update replaces its ex-date's row or adds it in its
 * place, so the snapshot stays the body `GET corporate-action?symbol=` answers. Rows never leave.
 */
export function corporateActionRowsModel(): ModelFactory {
  return (from) => {
    const rows = new Map<string, unknown>();
    if (Array.isArray(from)) for (const r of from) rows.set((r as { exDate: string }).exDate, r);
    return {
      apply(update) {
        rows.set((update as { exDate: string }).exDate, update);
      },
      snapshot: () => [...rows.entries()].sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0)).map(([, r]) => r),
    };
  };
}

export const STOCK_CHANNELS: readonly ChannelSpec[] = [
  { name: 'quotes', scope: 'public', model: latestModel() },
  // Every interval the history answers, 3m and 1w rolled up as it rolls them.
  ...STOCK_KLINE_INTERVALS.map((i): ChannelSpec => ({ name: `klines:${i}`, scope: 'public', model: latestModel() })),
  // An order leaves the snapshot once settled (state `history`).
  // A row at each change of its state, transaction, reason or totals (docs/corporate-actions.md).
  { name: CORPORATE_ACTIONS_CHANNEL, scope: 'public', model: corporateActionRowsModel() },
  { name: 'orders', scope: 'private', model: keyedModel((o: { orderId: string }) => o.orderId, (o: { state: string }) => o.state === 'history') },
  { name: 'operations', scope: 'private', model: recentModel(RECENT_OPERATIONS) },
  { name: 'balances', scope: 'private', model: latestModel() },
];

export const stockChannels = (): ChannelCatalog => channelCatalog(STOCK_CHANNELS);
