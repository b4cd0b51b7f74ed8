import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { AccountProof } from '../../../perp-types.ts';

export type GetAccountProofReturnType = AccountProof;
export type GetAccountProofErrorType = PerpRequestErrorType;

/**
 * `GET account/proof`: the account's leaf of the latest proof-of-reserves tree and its Merkle
 * path (docs/proof-of-reserves.md; examples/verify-reserves.ts checks it on chain).
 */
export function getAccountProof(transport: PerpTransport): Promise<GetAccountProofReturnType> {
  return transport.send('GET', 'account/proof', { idempotent: true });
}
