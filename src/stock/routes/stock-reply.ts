/**
 * The success answer of a stock route, typed for the TypeBox type provider: `stockOk` types its
 * envelope's `data` as optional (the same interface types the error envelope), which a route's 200
 * schema refuses, so the routes answer through `okReply`, whose `data` is present. Same object.
 */
import { stockOk, type StockEnvelope } from '../stock-envelope.ts';

export function okReply<T>(uuid: string, data: T): StockEnvelope<T> & { data: T } {
  return stockOk(uuid, data) as StockEnvelope<T> & { data: T };
}
