import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { AccountSummary } from '../../../perp-types.ts';

export type GetAccountReturnType = AccountSummary;
export type GetAccountErrorType = PerpRequestErrorType;

/** `GET account`: balances, equity and margin levels. */
export function getAccount(transport: PerpTransport): Promise<GetAccountReturnType> {
  return transport.send('GET', 'account', { idempotent: true });
}
