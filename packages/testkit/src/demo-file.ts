/**
 * `DATA_DIR/demo.json` as the embedded venue writes it (contract.md §0; the server's own type is
 * `DemoFile` in src/app/demo-file.ts): the demo wallets, the contracts, the demo API keys of both
 * venues and the sandbox's base URL and bearer token.
 */
export type Address = `0x${string}`;

export interface DemoCredentials {
  apiKey: string;
  apiSecret: string;
}

export interface DemoStockContracts {
  stockRouter: Address;
  oneClickRouter: Address;
  cashier: Address;
  cashToken: Address;
  accountLens: Address;
  /** Stock symbol → its token. */
  stocks: Record<string, Address>;
}

export interface DemoFile {
  chainId: number;
  rpcUrl: string;
  metricsUrl?: string;
  /** anvil's dev wallets, funded at deployment; `wallets[0]` is bound to the demo keys. */
  wallets: Array<{ address: Address; privateKey: `0x${string}` }>;
  stock: {
    baseUrl: string;
    wsUrl: string;
    product: string;
    contracts: DemoStockContracts;
    chains: Array<{ chainId: number; rpcUrl: string; contracts: DemoStockContracts }>;
    keys: {
      readOnly: DemoCredentials & { scopes: unknown[] };
      writable: DemoCredentials & { userAddress: Address; scopes: unknown[] };
    };
  };
  perp?: {
    baseUrl: string;
    wsUrl: string;
    contracts?: { marginVault: Address; collateralToken: Address; reserveRegistry?: Address };
    keys: { trader: DemoCredentials & { address: Address } };
  };
  sandbox?: { baseUrl: string; token: string };
}
