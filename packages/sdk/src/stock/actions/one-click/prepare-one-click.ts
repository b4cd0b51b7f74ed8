import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { OneClickPrepared } from '../../../stock-types.ts';

export type PrepareOneClickParameters = { deadline: number };
export type PrepareOneClickReturnType = OneClickPrepared;
export type PrepareOneClickErrorType = StockRequestErrorType;

/** `POST 1ct/prepare`: the delegation typed data (`signPayload`) for the wallet to sign. */
export function prepareOneClick(transport: StockTransport, parameters: PrepareOneClickParameters): Promise<PrepareOneClickReturnType> {
  return transport.call('POST', '/api/v1/1ct/prepare', { body: parameters });
}
