import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { InsuranceFund, PageQuery } from '../../../perp-types.ts';

export type GetInsuranceFundParameters = PageQuery;
export type GetInsuranceFundReturnType = InsuranceFund;
export type GetInsuranceFundErrorType = PerpRequestErrorType;

/** `GET insurance-fund` (no signature): balance, fees received, bad debt paid, open bad debt and a page of movements. */
export function getInsuranceFund(transport: PerpTransport, parameters: GetInsuranceFundParameters = {}): Promise<GetInsuranceFundReturnType> {
  return transport.send('GET', 'insurance-fund', { query: parameters, unsigned: true, idempotent: true });
}
