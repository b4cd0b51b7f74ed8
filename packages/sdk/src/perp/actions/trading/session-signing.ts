import { DEFAULT_ORDER_TTL_MS } from '@tokex/contract';
import type { PerpTransport } from '../../perp-transport.ts';
import type { SessionSigner, TypedData } from '../../../perp-types.ts';
import type { TypedDataSigner } from '../../../signer-types.ts';

/**
 * `input` as `account` may sign it: a One-Click session may not sign beyond its own life, so
 * without an expiry of the caller's the default ten minutes end with the session.
 */
export function withinSession<T extends { expiry?: number }>(transport: PerpTransport, account: TypedDataSigner, input: T): T {
  const sessionEnd = (account as Partial<SessionSigner>).expiresAt;
  if (input.expiry !== undefined || typeof sessionEnd !== 'number') return input;
  return { ...input, expiry: Math.min(transport.now() + DEFAULT_ORDER_TTL_MS, sessionEnd) };
}

/** `account`'s signature of typed data the API built, once it is for the transport's own chain. */
export function signForChain(transport: PerpTransport, account: TypedDataSigner, typedData: TypedData): Promise<`0x${string}`> {
  if (String(typedData.domain.chainId) !== String(transport.chainId)) {
    throw new Error(`perp API serves chain ${typedData.domain.chainId}, not ${transport.chainId}`);
  }
  return account.signTypedData(typedData);
}
