import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { OneClickEnabled } from '../../../stock-types.ts';

export type DisableOneClickReturnType = OneClickEnabled;
export type DisableOneClickErrorType = StockRequestErrorType;

/** `POST 1ct/disable`. */
export function disableOneClick(transport: StockTransport): Promise<DisableOneClickReturnType> {
  return transport.call('POST', '/api/v1/1ct/disable');
}
