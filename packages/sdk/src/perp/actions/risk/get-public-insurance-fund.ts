import { publicCall, type PerpPublicTransport, type PerpRequestErrorType } from '../../perp-transport.ts';
import { canonicalQuery } from '../../../signing.ts';

export type GetPublicInsuranceFundParameters = { page?: number; limit?: number; startTime?: number; endTime?: number };
export type GetPublicInsuranceFundReturnType = unknown;
export type GetPublicInsuranceFundErrorType = PerpRequestErrorType;

/** `GET insurance-fund` without a key (one attempt, no retry). */
export async function getPublicInsuranceFund<T = GetPublicInsuranceFundReturnType>(transport: PerpPublicTransport, parameters: GetPublicInsuranceFundParameters = {}): Promise<T> {
  const q = canonicalQuery(parameters);
  return publicCall<T>(transport, 'GET', q === '' ? 'insurance-fund' : `insurance-fund?${q}`);
}
