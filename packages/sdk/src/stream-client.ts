/**
 * The WebSocket stream client of both APIs (contract.md §C, docs/streams.md).
 *
 * One connection carries every subscription of the client. Each stream (a channel and a symbol, or a
 * private channel of the key's account) keeps the last `seq` it delivered, so that:
 * - after a reconnect the client re-authenticates, then subscribes again: private streams with
 *   `since` = that seq (the server replays what was missed: nothing lost, nothing repeated), public
 *   streams without (a fresh snapshot, flagged as such);
 * - an update that does not follow its stream's seq is never delivered: the stream is subscribed
 *   again (a resume for a private stream, a fresh snapshot for a public one); an update already seen
 *   is dropped;
 * - a `since` the server no longer retains (perp 10003, stock 410), or a stream the server restarted,
 *   gives a fresh snapshot flagged `continuityLost`.
 *
 * Browser-safe: WebCrypto for the `auth` signature, the global WebSocket when there is one, else the
 * `ws` package loaded on demand. No `node:` import.
 */
export { StreamClosedError, StreamError, StreamOrderError, type StreamClientErrorCode, type StreamOrderAction } from './stream-error.ts';
export { nextStreamAuthTs, PERP_STREAM_PATH, STOCK_STREAM_PATH, stockStreamPayload } from './stream-sign.ts';
export {
  type StreamApi,
  type KlineInterval,
  type PerpPublicChannel,
  type PerpPrivateChannel,
  type StockPublicChannel,
  type StockPrivateChannel,
  type WebSocketLike,
  type WebSocketConstructorLike,
  type StreamLogLevel,
  type StreamLogger,
  type ReconnectOptions,
  type StreamClientOptions,
  type StreamOrderOptions,
  type SnapshotReason,
  type SnapshotInfo,
  type StreamHandlers,
  type PrivateSubscribeOptions,
  type PublicSubscribeOptions,
  type SubscriptionState,
  type StreamSubscription,
  type ConnectionState,
  type StreamClientEvents,
} from './stream/stream-types.ts';
export { streamApiOf } from './stream/stream-internals.ts';
export { StreamClient } from './stream/stream-client-core.ts';
export { PerpStreamClient } from './stream/perp-stream-client.ts';
export { StockStreamClient } from './stream/stock-stream-client.ts';
