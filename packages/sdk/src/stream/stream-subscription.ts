/**
 * One stream a client subscribed to (stream-client-core.ts drives it): its state, last seq and
 * handlers, and the requests in flight on a connection.
 */
import { SnapshotReason, StreamHandlers, SubscriptionState, StreamSubscription } from './stream-types.ts';
import { Deferred, deferred, Timer, PendingOrder, keyOf } from './stream-internals.ts';

export class Subscription implements StreamSubscription {
  state: SubscriptionState = 'pending';
  lastSeq: number | undefined;
  /** Id of the subscribe in flight on the current connection. */
  reqId: string | undefined;
  /** The reason the next snapshot will carry. */
  nextReason: SnapshotReason = 'initial';
  /** The next subscribe goes without `since` even for a private stream (since not retained, stream restarted). */
  fresh = false;
  retries = 0;
  retryTimer: Timer | undefined;
  readonly readyD = deferred<void>();

  constructor(
    private readonly client: { unsubscribe(sub: Subscription): Promise<void> },
    readonly channel: string,
    readonly symbol: string | undefined,
    readonly handlers: StreamHandlers<any, any>,
  ) {}

  get isPrivate(): boolean {
    return this.symbol === undefined;
  }
  get key(): string {
    return keyOf(this.channel, this.symbol);
  }
  get ready(): Promise<void> {
    return this.readyD.promise;
  }
  unsubscribe(): Promise<void> {
    return this.client.unsubscribe(this);
  }
}

export type Request =
  | { kind: 'auth' }
  | { kind: 'subscribe'; sub: Subscription; since: number | undefined }
  | { kind: 'unsubscribe'; done?: Deferred<void> }
  | { kind: 'order'; order: PendingOrder };
