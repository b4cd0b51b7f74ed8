/**
 * The One Click delegation a user's wallet signs (contract.md §A, contracts/OneClickRouter.sol):
 * domain `OneClickRouter` / `1` / chain id / the router; `Delegate(address user,address delegatee,
 * uint64 nonce,uint32 deadline)` with `nonce = OneClickRouter.delegationNonce(user, delegatee)`:
 * the signature may be submitted until `deadline`, and the delegation then lasts the router's fixed
 * `DELEGATION_LIFETIME` (30 days, {@link DELEGATION_LIFETIME_SECONDS}) from the block that records it.
 * `1ct/prepare` answers {@link delegateTypedData}; `1ct/enable` checks the signature with
 * {@link verifyDelegation} before the relayer submits `delegateBySig(user, delegatee, deadline, signature)`.
 */
import { DELEGATE_FIELDS, DELEGATION_LIFETIME_SECONDS, ONE_CLICK_DOMAIN_NAME, ONE_CLICK_DOMAIN_VERSION } from '@tokex/contract';
import type { Address, Hex } from 'viem';
import { ValidationError } from '../errors/app-error.ts';
import { assertNotExpired, defineTypedData, typedDataDomain, type CompleteTypedData, type TypedDataDomain } from './typed-data.ts';

export { DELEGATION_LIFETIME_SECONDS, ONE_CLICK_DOMAIN_NAME, ONE_CLICK_DOMAIN_VERSION };

export const delegateType = defineTypedData({
  primaryType: 'Delegate',
  types: {
    Delegate: DELEGATE_FIELDS,
  },
});

export interface DelegateMessage {
  user: Address;
  delegatee: Address;
  nonce: bigint;
  /** Seconds since the epoch: the last moment the signature may be submitted. */
  deadline: number;
}

export function oneClickDomain(chainId: number, oneClickRouter: Address): TypedDataDomain {
  return typedDataDomain({ name: ONE_CLICK_DOMAIN_NAME, version: ONE_CLICK_DOMAIN_VERSION, chainId, verifyingContract: oneClickRouter });
}

/** The `signPayload` of `1ct/prepare`: complete typed data, `message.user` the key's bound wallet. */
export function delegateTypedData(domain: TypedDataDomain, message: DelegateMessage): CompleteTypedData<'Delegate'> {
  return delegateType.build(domain, { ...message });
}

export function delegateDigest(domain: TypedDataDomain, message: DelegateMessage): Hex {
  return delegateType.hash(domain, { ...message });
}

/**
 * What `1ct/enable` checks before anything is sent: the deadline has not passed, the message is
 * for `user` (the key's bound wallet) and `delegatee` (our relayer), and `user` signed it.
 * Throws ValidationError naming the field; answers the message as read (typed values).
 */
export async function verifyDelegation(opts: {
  domain: TypedDataDomain;
  /** The message as the client sent it back, or as the server rebuilt it. */
  message: unknown;
  signature: unknown;
  user: Address;
  delegatee: Address;
  nowSeconds: number;
}): Promise<DelegateMessage> {
  const m = delegateType.parseMessage(opts.message) as unknown as DelegateMessage;
  if (m.user.toLowerCase() !== opts.user.toLowerCase()) throw new ValidationError('message.user', 'is not the wallet bound to the key');
  if (m.delegatee.toLowerCase() !== opts.delegatee.toLowerCase()) throw new ValidationError('message.delegatee', 'is not the relayer');
  assertNotExpired(m.deadline as unknown as bigint, opts.nowSeconds);
  await delegateType.verifySigner(opts.domain, m as unknown as Record<string, unknown>, opts.signature, m.user, 'message.user');
  return { ...m, deadline: Number(m.deadline) };
}
