/**
 * The stock venue's channels (contract.md §C, docs/streams.md): `quotes` and `klines:<interval>` per
 * symbol; `orders`, `operations` and `balances` per wallet, after `auth`. Each data object is the
 * REST body of the same thing (`GET prices/{symbol}`, the history's candles, `GET orders/{id}`,
 * the operation detail, `GET users/{id}/balance`).
 */
import { STOCK_KLINE_INTERVALS } from '@tokex/contract';
import { channelCatalog, type ChannelCatalog, type ChannelSpec } from '../../streams/stream-channels.ts';
import { keyedModel, latestModel, recentModel } from '../../streams/stream-model.ts';

export const RECENT_OPERATIONS = 50;

/**
 * The private streams' subject of an API key bound to no wallet (what it recorded); a bound key's
 * is its wallet's lower-case address.
 */
export const keySubject = (apiKey: string): string => `key:${apiKey}`;

export const STOCK_CHANNELS: readonly ChannelSpec[] = [
  { name: 'quotes', scope: 'public', model: latestModel() },
  // Every interval the history answers, 3m and 1w rolled up as it rolls them.
  ...STOCK_KLINE_INTERVALS.map((i): ChannelSpec => ({ name: `klines:${i}`, scope: 'public', model: latestModel() })),
  // An order leaves the snapshot once settled (state `history`).
  { name: 'orders', scope: 'private', model: keyedModel((o: { orderId: string }) => o.orderId, (o: { state: string }) => o.state === 'history') },
  { name: 'operations', scope: 'private', model: recentModel(RECENT_OPERATIONS) },
  { name: 'balances', scope: 'private', model: latestModel() },
];

export const stockChannels = (): ChannelCatalog => channelCatalog(STOCK_CHANNELS);
