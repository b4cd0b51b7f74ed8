/**
 * The One Click delegation's EIP-712 types as contract.md spells them, written out once for the tests
 * that check what the code answers against the contract (not taken from the code they check).
 */
export const CONTRACT_MD_DELEGATE_TYPES = {
  EIP712Domain: [
    { name: 'name', type: 'string' },
    { name: 'version', type: 'string' },
    { name: 'chainId', type: 'uint256' },
    { name: 'verifyingContract', type: 'address' },
  ],
  Delegate: [
    { name: 'user', type: 'address' },
    { name: 'delegatee', type: 'address' },
    { name: 'nonce', type: 'uint64' },
    { name: 'deadline', type: 'uint32' },
  ],
};
