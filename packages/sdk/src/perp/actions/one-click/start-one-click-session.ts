import type { PerpTransport } from '../../perp-transport.ts';
import type { SessionSigner } from '../../../perp-types.ts';
import type { TypedDataSigner } from '../../../signer-types.ts';
import { enableOneClick, type EnableOneClickErrorType } from './enable-one-click.ts';
import { newSessionSigner } from './new-session-signer.ts';

export type StartOneClickSessionParameters = { wallet: TypedDataSigner; ttlMs?: number };
export type StartOneClickSessionReturnType = SessionSigner;
export type StartOneClickSessionErrorType = EnableOneClickErrorType;

/**
 * A fresh session key, enabled for `ttlMs` (default 24 h, at most 30 days): pass it to
 * `placeOrder`, `signOrder` or `closePosition` instead of the wallet.
 */
export async function startOneClickSession(transport: PerpTransport, parameters: StartOneClickSessionParameters): Promise<StartOneClickSessionReturnType> {
  const session = newSessionSigner(transport.now() + (parameters.ttlMs ?? 24 * 60 * 60_000));
  await enableOneClick(transport, { wallet: parameters.wallet, sessionAddress: session.address, expiresAt: session.expiresAt });
  return session;
}
