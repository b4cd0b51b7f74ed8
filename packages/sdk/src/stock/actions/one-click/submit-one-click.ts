import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { OneClickEnabled } from '../../../stock-types.ts';

export type SubmitOneClickParameters = { signature: `0x${string}`; deadline: number };
export type SubmitOneClickReturnType = OneClickEnabled;
export type SubmitOneClickErrorType = StockRequestErrorType;

/** `POST 1ct/enable`: the relayer submits the signed delegation. */
export function submitOneClick(transport: StockTransport, parameters: SubmitOneClickParameters): Promise<SubmitOneClickReturnType> {
  return transport.call('POST', '/api/v1/1ct/enable', { body: parameters });
}
