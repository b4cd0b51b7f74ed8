import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { OneClickState } from '../../../stock-types.ts';

export type GetOneClickStatusReturnType = OneClickState;
export type GetOneClickStatusErrorType = StockRequestErrorType;

/** `GET 1ct/status`. */
export function getOneClickStatus(transport: StockTransport): Promise<GetOneClickStatusReturnType> {
  return transport.call('GET', '/api/v1/1ct/status');
}
