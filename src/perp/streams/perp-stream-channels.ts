/**
 * The perpetual venue's channels (contract.md §C, docs/streams.md): public per symbol, private per
 * account. The data of each is the REST body of the same thing (`GET depth`, `GET tickers`,
 * `GET orders/history` rows, `GET positions` rows, `GET account`…), so a client parses one shape.
 */
import { OPEN_ORDER_STATUSES } from '@tokex/contract';
import { INTERVALS } from '../../marketdata/market-types.ts';
import { channelCatalog, type ChannelCatalog, type ChannelSpec } from '../../streams/stream-channels.ts';
import { accountBody } from '../perp-views.ts';
import { bookModel, keyedModel, latestModel, recentModel } from '../../streams/stream-model.ts';

/** Trades and fills a snapshot carries, newest first. */
export const RECENT_ITEMS = 50;

/** Open orders stay in a snapshot: waiting triggers (UNTRIGGERED) as well as resting ones. */
const OPEN: ReadonlySet<string> = new Set(OPEN_ORDER_STATUSES);

export const PERP_CHANNELS: readonly ChannelSpec[] = [
  { name: 'depth', scope: 'public', model: bookModel() },
  { name: 'trades', scope: 'public', model: recentModel(RECENT_ITEMS) },
  { name: 'tickers', scope: 'public', model: latestModel() },
  ...INTERVALS.map((i): ChannelSpec => ({ name: `klines:${i}`, scope: 'public', model: latestModel() })),
  { name: 'mark', scope: 'public', model: latestModel() },
  { name: 'orders', scope: 'private', model: keyedModel((o: { orderId: string }) => o.orderId, (o: { status: string }) => !OPEN.has(o.status)) },
  { name: 'fills', scope: 'private', model: recentModel(RECENT_ITEMS) },
  { name: 'positions', scope: 'private', model: keyedModel((p: { symbol: string }) => p.symbol, (p: { size: string }) => !/[1-9]/.test(p.size)) },
  // An account the engine has never seen reads as empty, as `GET account` answers it.
  { name: 'account', scope: 'private', model: latestModel(), empty: (account) => ({ ...accountBody(account, undefined, undefined), pendingWithdrawals: '0' }) },
];

export const perpChannels = (): ChannelCatalog => channelCatalog(PERP_CHANNELS);
