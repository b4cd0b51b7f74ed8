/**
 * The EIP-712 type the stock venue's wallets sign: the One Click delegation (contract.md §A,
 * contracts/OneClickRouter.sol), in the domain `OneClickRouter` / `1` / chain id / the router.
 */
import type { TypedFields } from '../common/typed-data-fields.ts';

export const ONE_CLICK_DOMAIN_NAME = 'OneClickRouter';
export const ONE_CLICK_DOMAIN_VERSION = '1';

/** `nonce` is `OneClickRouter.nonces(user)`; `deadline` is in seconds. */
export const DELEGATE_FIELDS = [
  { name: 'user', type: 'address' },
  { name: 'delegatee', type: 'address' },
  { name: 'nonce', type: 'uint64' },
  { name: 'deadline', type: 'uint32' },
] as const satisfies TypedFields;
