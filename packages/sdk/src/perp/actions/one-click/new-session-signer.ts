import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { SessionSigner } from '../../../perp-types.ts';

/** A session key (a new random private key, or `privateKey`) that will be enabled until `expiresAt`. */
export function newSessionSigner(expiresAt: number, privateKey: `0x${string}` = generatePrivateKey()): SessionSigner {
  const account = privateKeyToAccount(privateKey);
  const signer = { address: account.address, expiresAt, signTypedData: (typedData: any) => account.signTypedData(typedData) };
  // Not enumerable: a logged or serialised signer does not show its key.
  return Object.defineProperty(signer, 'privateKey', { value: privateKey, enumerable: false }) as SessionSigner;
}
