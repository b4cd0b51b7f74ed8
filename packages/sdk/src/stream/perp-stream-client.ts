/**
 * The perpetual API's stream client: StreamClient with order entry's typed methods.
 */
import type { StreamCancelBody } from '@tokex/contract';
import type { BatchOrdersResult, OrderView, PlacedOrder, SignedMessage } from '../perp-types.ts';
import { PerpPublicChannel, PerpPrivateChannel, StreamClientOptions, StreamOrderOptions } from './stream-types.ts';
import { StreamClient } from './stream-client-core.ts';

/** The two fields a signed body has on the wire (a SignedOrder's `orderHash` would make it invalid). */
const signedBody = ({ message, signature }: SignedMessage): SignedMessage => ({ message, signature });

/**
 * The perpetual API's streams: `ws://host:port/v4/public/ws`. With a key of TRADE permission, also
 * order entry on the same connection (docs/streams.md "Order entry"): each call is the REST call of
 * the same name, answered over the socket (see `sendOrder` for the errors and `sent`).
 */
export class PerpStreamClient extends StreamClient<PerpPublicChannel, PerpPrivateChannel> {
  constructor(options: Omit<StreamClientOptions, 'api' | 'chainId' | 'product'>) {
    super({ ...options, api: 'perp' });
  }

  /** `place` (`POST orders`): a signed order (`PerpClient.signOrder`'s answer); the order with its status and fills. */
  placeOrder<T = PlacedOrder>(order: SignedMessage, options?: StreamOrderOptions): Promise<T> {
    return this.sendOrder<T>('place', signedBody(order), options);
  }

  /** `batch` (`POST orders/batch`): 1 to 20 signed orders; one result per order, in input order. */
  placeBatch<T = BatchOrdersResult>(orders: ReadonlyArray<SignedMessage>, options?: StreamOrderOptions): Promise<T> {
    return this.sendOrder<T>('batch', { orders: orders.map(signedBody) }, options);
  }

  /**
   * `cancel` (`DELETE orders/{orderId}`): the order, CANCELED. `idempotencyKey` is REST's
   * `Idempotency-Key`: the same key again (over either transport) answers the first cancel.
   */
  cancelOrder<T = OrderView>(orderId: string, options: StreamOrderOptions & Pick<StreamCancelBody, 'idempotencyKey'> = {}): Promise<T> {
    const { idempotencyKey, ...rest } = options;
    const body: StreamCancelBody = { orderId, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) };
    return this.sendOrder<T>('cancel', body, rest);
  }

  /** `amend` (`POST orders/amend`): a signed amendment (`PerpClient.signAmend`'s answer); the order as it stands after it. */
  amendOrder<T = PlacedOrder>(amend: SignedMessage, options?: StreamOrderOptions): Promise<T> {
    return this.sendOrder<T>('amend', signedBody(amend), options);
  }
}
