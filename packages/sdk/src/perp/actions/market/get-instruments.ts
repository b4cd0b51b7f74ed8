import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { Instrument } from '../../../perp-types.ts';

export type GetInstrumentsParameters = { symbol?: string };
export type GetInstrumentsReturnType = Instrument[];
export type GetInstrumentsErrorType = PerpRequestErrorType;

/** `GET instruments`: every instrument, or one `symbol`; also refreshes the cache the order checks use. */
export async function getInstruments(transport: PerpTransport, parameters: GetInstrumentsParameters = {}): Promise<GetInstrumentsReturnType> {
  const list = await transport.send<Instrument[]>('GET', 'instruments', { query: parameters, idempotent: true });
  if (parameters.symbol === undefined) transport.cache.instruments = Promise.resolve(new Map(list.map((i) => [i.symbol, i])));
  return list;
}
