import type { Address, Hex } from 'viem';

/**
 * anvil's well-known dev accounts (mnemonic `test test … junk`, indexes 0..9). Public test keys:
 * they hold value only on local chains and must never be used anywhere else.
 *
 * Decision: accounts 0..3 are the demo user wallets (funded by the deployment), account 9 is the
 * embedded stack's deployer, owner and treasury; 8, 7, 6 and 5 are the sending roles' own keys
 * (executor, One Click relayer, perpetual operator, oracle publisher: src/chain/operator-roles.ts).
 * 4 stays unused so tests and tools can take it freely (tests on a chain of their own may still
 * use 5).
 */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';

export interface DevAccount {
  index: number;
  address: Address;
  privateKey: Hex;
}

export const ANVIL_ACCOUNTS: readonly DevAccount[] = [
  { index: 0, address: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266', privateKey: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80' },
  { index: 1, address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', privateKey: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' },
  { index: 2, address: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', privateKey: '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a' },
  { index: 3, address: '0x90F79bf6EB2c4f870365E785982E1f101E93b906', privateKey: '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6' },
  { index: 4, address: '0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65', privateKey: '0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a' },
  { index: 5, address: '0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc', privateKey: '0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba' },
  { index: 6, address: '0x976EA74026E726554dB657fA54763abd0C3a0aa9', privateKey: '0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e' },
  { index: 7, address: '0x14dC79964da2C08b23698B3D3cc7Ca32193d9955', privateKey: '0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356' },
  { index: 8, address: '0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f', privateKey: '0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97' },
  { index: 9, address: '0xa0Ee7A142d267C1f36714E4a8F75612F20a79720', privateKey: '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6' },
];

/**
 * The perp venue's demo market maker: index 10 of the same mnemonic (anvil funds only 0..9, so the
 * deployer gives it gas before its collateral deposit). A public key: demo mode only.
 */
export const MARKET_MAKER_ACCOUNT: DevAccount = {
  index: 10,
  address: '0xBcd4042DE499D14e55001CcbB24a551F3b954096',
  privateKey: '0xf214f2b2cd398c806f84e317254e0f0b801d0643303237d97a22a48e01628897',
};

/**
 * The perp venue's demo taker: index 11 of the same mnemonic. It sends a small market order now and
 * then, so a new install shows trades, not only quotes. A public key: demo mode only.
 */
export const DEMO_TAKER_ACCOUNT: DevAccount = {
  index: 11,
  address: '0x71bE63f3384f5fb98995898A86B02Fb2426c5788',
  privateKey: '0x701b615bbdfb9de65240bc28bd21bbc0d996645a3dd57e7b12bc2bdf6f192c82',
};

/** Demo user wallets: anvil accounts 0..3. `DEMO_WALLETS[0]` is the one bound to the demo keys. */
export const DEMO_WALLETS: readonly DevAccount[] = ANVIL_ACCOUNTS.slice(0, 4);

/**
 * The embedded stack's deployer, owner and treasury: anvil account 9 (and, until the wiring gives
 * each role its key from operator-roles.ts, the operator that settles).
 */
export const OPERATOR_ACCOUNT: DevAccount = ANVIL_ACCOUNTS[9];

/** The embedded stack's executor: anvil account 8, made an operator at deployment. */
export const EXECUTOR_ACCOUNT: DevAccount = ANVIL_ACCOUNTS[8];

/** The embedded stack's oracle publisher: anvil account 5, made a publisher of the PriceFeedHub. */
export const ORACLE_PUBLISHER_ACCOUNT: DevAccount = ANVIL_ACCOUNTS[5];

/** The embedded demo's guardian (pauses the stock venue and the perpetual vault's payments; docs/security.md). No role runs with its key. */
export const GUARDIAN_ACCOUNT: DevAccount = ANVIL_ACCOUNTS[4];

/** The guardian a deployment names: GUARDIAN_ADDRESS, else anvil account 4 on the embedded chain, else none. */
export function guardianAddressOf(config: { guardianAddress?: `0x${string}`; rpcUrl?: string }): `0x${string}` | undefined {
  return config.guardianAddress ?? (config.rpcUrl ? undefined : GUARDIAN_ACCOUNT.address);
}

export const ANVIL_CHAIN_ID = 31337;
