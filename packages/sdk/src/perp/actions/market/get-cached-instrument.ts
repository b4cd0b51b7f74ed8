import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { Instrument } from '../../../perp-types.ts';

export type GetCachedInstrumentParameters = { symbol: string };
export type GetCachedInstrumentReturnType = Instrument | undefined;
export type GetCachedInstrumentErrorType = PerpRequestErrorType;

/** The instrument `symbol`, from the instruments fetched once per transport (refreshed by `getInstruments`). */
export async function getCachedInstrument(transport: PerpTransport, parameters: GetCachedInstrumentParameters): Promise<GetCachedInstrumentReturnType> {
  transport.cache.instruments ??= transport.send<Instrument[]>('GET', 'instruments', { idempotent: true }).then(
    (list) => new Map(list.map((i) => [i.symbol, i])),
    (err) => {
      transport.cache.instruments = undefined;
      throw err;
    },
  );
  return (await transport.cache.instruments).get(parameters.symbol);
}
