/**
 * The success answer of a stock route, typed for the TypeBox type provider: `stockOk` types its
 * envelope's `data` as optional (the same interface types the error envelope), which a route's 200
 * schema refuses, so the routes answer through `okReply`, whose `data` is present. Same object.
 */
import type { FastifyReply } from 'fastify';
import { renderExactJson } from '../exact-number.ts';
import { JSON_UTF8, stockOk, type StockEnvelope } from '../stock-envelope.ts';

export function okReply<T>(uuid: string, data: T): StockEnvelope<T> & { data: T } {
  return stockOk(uuid, data) as StockEnvelope<T> & { data: T };
}

/**
 * `okReply` for data holding exact numbers (src/stock/exact-number.ts): the reply is serialised by
 * `renderExactJson` rather than the response schema's serializer, which would print a double.
 * The route's schema still documents it; its test checks the answer against the schema.
 */
export function okExactReply<T>(reply: FastifyReply, uuid: string, data: T): StockEnvelope<T> & { data: T } {
  // A reply serializer of its own leaves the content type to the route.
  void reply.serializer(renderExactJson).type(JSON_UTF8);
  return okReply(uuid, data);
}
