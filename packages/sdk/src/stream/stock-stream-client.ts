/**
 * The tokenized-stock API's stream client.
 */
import { StockPublicChannel, StockPrivateChannel, StreamClientOptions } from './stream-types.ts';
import { StreamClient } from './stream-client-core.ts';

/**
 * The tokenized-stock API's streams: `ws://host:port[prefix]/api/v1/ws`, of the chain `chainId`
 * names (as StockClient's; omitted, the server's first chain), public channels included.
 */
export class StockStreamClient extends StreamClient<StockPublicChannel, StockPrivateChannel> {
  constructor(options: Omit<StreamClientOptions, 'api'>) {
    super({ ...options, api: 'stock' });
  }
}
