/**
 * The EIP-712 type the stock venue's wallets sign: the One Click delegation (contract.md §A,
 * contracts/OneClickRouter.sol), in the domain `OneClickRouter` / `1` / chain id / the router.
 */
import type { TypedFields } from '../common/typed-data-fields.ts';

export const ONE_CLICK_DOMAIN_NAME = 'OneClickRouter';
export const ONE_CLICK_DOMAIN_VERSION = '1';

/**
 * How long a One Click delegation lasts: 30 days from the block that records it on chain
 * (`OneClickRouter.DELEGATION_LIFETIME`), fixed and not part of the signed typed data. Afterwards the
 * router refuses the delegatee's calls until the wallet enables again (which also extends it).
 */
export const DELEGATION_LIFETIME_SECONDS = 30 * 24 * 3600;

/**
 * `nonce` is `OneClickRouter.delegationNonce(user, delegatee)` (`nonces(user)` until the delegatee
 * refused a delegation of the user); `deadline` is when the signature may last be submitted, Unix
 * seconds.
 */
export const DELEGATE_FIELDS = [
  { name: 'user', type: 'address' },
  { name: 'delegatee', type: 'address' },
  { name: 'nonce', type: 'uint64' },
  { name: 'deadline', type: 'uint32' },
] as const satisfies TypedFields;
