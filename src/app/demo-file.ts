/**
 * DATA_DIR/demo.json, dev mode only (DEMO_MODE, on by default for the embedded anvil): the demo
 * wallets and API keys with their secrets, so that the README's examples work as written. The
 * shape is contract.md §0's; fields may be added, none renamed. Written by the process that serves
 * the stock API; `perp` is there when the same process serves the perp API too (role `all`), with
 * the perpetual venue's contracts once it is deployed.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Address, Hex } from 'viem';
import type { StockScope } from '../auth/api-key-model.ts';
import { DEMO_WALLETS } from '../chain/anvil-accounts.ts';
import { perpDeploymentOf } from '../chain/deploy-perp-venue.ts';
import type { DeploymentContracts } from '../chain/deployment-file.ts';
import { getMeta, setMeta } from '../storage/meta-store.ts';
import type { StackContext } from './stack-context.ts';
import { metricsUrlOf } from './metrics-wiring.ts';
import { SANDBOX_PATH } from '@tokex/contract';

export interface DemoCredentials {
  apiKey: string;
  apiSecret: string;
}

/** The stock venue's addresses a client needs, as the deployment record holds them. */
export type DemoStockContracts = Pick<DeploymentContracts, 'stockRouter' | 'oneClickRouter' | 'cashier' | 'cashToken' | 'accountLens' | 'stocks'>;

export interface DemoFile {
  chainId: number;
  rpcUrl: string;
  /** This process's Prometheus metrics (`GET /metrics`), absent with METRICS_PORT=off. */
  metricsUrl?: string;
  /** anvil's dev wallets, funded at deployment; `wallets[0]` is bound to the writable key. */
  wallets: Array<{ address: Address; privateKey: Hex }>;
  stock: {
    baseUrl: string;
    /** The stock API's WebSocket streams (docs/streams.md). */
    wsUrl: string;
    product: string;
    contracts: DemoStockContracts;
    /**
     * Every chain the stock API serves, the first (the top-level `chainId`, `rpcUrl` and
     * `contracts`) first: a request's `x-api-chain-id` picks one (docs/stock-api.md, "Several chains").
     */
    chains: Array<{ chainId: number; rpcUrl: string; contracts: DemoStockContracts }>;
    /**
     * Each key with its scopes (docs/api-keys-secrets.md "Stock key scopes"): one per served chain
     * for the product, READ_ONLY or WRITABLE.
     */
    keys: {
      readOnly: DemoCredentials & { scopes: StockScope[] };
      writable: DemoCredentials & { userAddress: Address; scopes: StockScope[] };
    };
  };
  perp?: {
    /** `{perp_base_url}`: paths follow as `/v4/public/trader/...`. */
    baseUrl: string;
    /** The perpetual API's WebSocket streams (docs/streams.md). */
    wsUrl: string;
    /** Present once the perp venue (margin vault) is deployed with the stack. */
    /** `reserveRegistry`: where the proof-of-reserves roots are posted (docs/proof-of-reserves.md). */
    contracts?: { marginVault: Address; collateralToken: Address; reserveRegistry?: Address };
    keys: {
      /** READ, TRADE and TRANSFER for `wallets[0]`, as a wallet-created key is. */
      trader: DemoCredentials & { address: Address };
    };
  };
  /**
   * The sandbox control API (docs/sandbox.md), present while SANDBOX is on: its base URL (the stock
   * API's, then `/sandbox/v1`) and the bearer token its routes need.
   */
  sandbox?: { baseUrl: string; token: string };
}

export function demoFilePath(dataDir: string): string {
  return path.join(dataDir, 'demo.json');
}

/**
 * Writes demo.json for the stock API this process serves. The demo keys are created once (their
 * ids kept in meta) and reused while still valid, so demo.json stays the same across restarts.
 */
export async function writeDemoFile(ctx: StackContext, stockBaseUrl: string): Promise<DemoFile> {
  const { config, keys, db } = ctx;
  const demoUser = DEMO_WALLETS[0].address.toLowerCase() as Address;
  const file = demoFilePath(config.dataDir);
  const previous = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as DemoFile) : undefined;
  const ids = JSON.parse((await getMeta(db, 'demo.stockKeys')) ?? '{}') as { readOnly?: string; writable?: string };
  const ensure = async (id: string | undefined, secret: string | undefined, create: () => Promise<DemoCredentials>): Promise<DemoCredentials> => {
    if (id && secret) {
      const key = await keys.lookupForAuth(id);
      if (key && key.active && key.secret === secret) return { apiKey: id, apiSecret: secret };
    }
    return create();
  };
  // One scope per chain served, for the product; a key reused from an earlier start (made before
  // scopes, or before a chain was added) gains the scopes it lacks, and shows those it holds.
  const chainIds = [ctx, ...ctx.otherChains].map((c) => c.config.chainId);
  const served = (access: StockScope['access']): StockScope[] => chainIds.map((chainId) => ({ chainId, productType: config.stockProduct, access }));
  const common = { ipWhitelist: ['127.0.0.1', '::1'] };
  const readOnly = await ensure(ids.readOnly, previous?.stock?.keys?.readOnly?.apiSecret, async () => {
    const r = await keys.create({ ...common, scopes: served('READ_ONLY'), label: 'demo read-only' });
    return { apiKey: r.key.apiKey, apiSecret: r.apiSecret };
  });
  const writable = await ensure(ids.writable, previous?.stock?.keys?.writable?.apiSecret, async () => {
    const r = await keys.create({ ...common, scopes: served('WRITABLE'), label: 'demo writable', userAddress: demoUser });
    return { apiKey: r.key.apiKey, apiSecret: r.apiSecret };
  });
  await setMeta(db, 'demo.stockKeys', JSON.stringify({ readOnly: readOnly.apiKey, writable: writable.apiKey }));
  for (const [apiKey, access] of [[readOnly.apiKey, 'READ_ONLY'], [writable.apiKey, 'WRITABLE']] as const) {
    const held = (await keys.get(apiKey))?.scopes ?? [];
    const missing = served(access).filter((s) => !held.some((h) => h.chainId === s.chainId && h.productType === s.productType));
    if (missing.length > 0) await keys.update(apiKey, { addScopes: missing });
  }
  const scopesOf = async (apiKey: string): Promise<StockScope[]> => (await keys.get(apiKey))?.scopes ?? [];

  const contractsOf = (c: StackContext['chain']['deployment']['contracts']): DemoStockContracts => ({
    stockRouter: c.stockRouter,
    oneClickRouter: c.oneClickRouter,
    cashier: c.cashier,
    cashToken: c.cashToken,
    accountLens: c.accountLens,
    stocks: c.stocks,
  });
  const demo: DemoFile = {
    chainId: config.chainId,
    rpcUrl: ctx.chain.rpcUrl,
    ...(metricsUrlOf(ctx) ? { metricsUrl: metricsUrlOf(ctx) } : {}),
    wallets: DEMO_WALLETS.map((w) => ({ address: w.address, privateKey: w.privateKey })),
    stock: {
      baseUrl: stockBaseUrl,
      wsUrl: `${stockBaseUrl.replace(/^http/, 'ws')}/api/v1/ws`,
      product: config.stockProduct,
      contracts: contractsOf(ctx.chain.deployment.contracts),
      chains: [ctx, ...ctx.otherChains].map((c) => ({ chainId: c.config.chainId, rpcUrl: c.chain.rpcUrl, contracts: contractsOf(c.chain.deployment.contracts) })),
      keys: {
        readOnly: { ...readOnly, scopes: await scopesOf(readOnly.apiKey) },
        writable: { ...writable, userAddress: demoUser, scopes: await scopesOf(writable.apiKey) },
      },
    },
  };
  const perp = ctx.endpoints.perp;
  if (perp) {
    const perpIds = JSON.parse((await getMeta(db, 'demo.perpKeys')) ?? '{}') as { trader?: string };
    const trader = await ensure(perpIds.trader, previous?.perp?.keys?.trader?.apiSecret, async () => {
      // As `POST api-keys` creates it for a wallet: bound, every permission, no IP whitelist.
      const r = await keys.create({ api: 'perp', permissions: ['READ', 'TRADE', 'TRANSFER'], label: 'demo trader', ipWhitelist: [], chainId: config.chainId, userAddress: demoUser });
      return { apiKey: r.key.apiKey, apiSecret: r.apiSecret };
    });
    await setMeta(db, 'demo.perpKeys', JSON.stringify({ trader: trader.apiKey }));
    const venue = perpDeploymentOf(ctx.chain.record);
    demo.perp = {
      baseUrl: perp.baseUrl,
      wsUrl: `${perp.baseUrl.replace(/^http/, 'ws')}/v4/public/ws`,
      ...(venue
        ? {
            contracts: {
              marginVault: venue.contracts.marginVault,
              collateralToken: venue.contracts.collateralToken,
              ...(venue.contracts.reserveRegistry ? { reserveRegistry: venue.contracts.reserveRegistry } : {}),
            },
          }
        : {}),
      keys: { trader: { ...trader, address: demoUser } },
    };
  }
  if (ctx.sandbox) demo.sandbox = { baseUrl: `${stockBaseUrl}${SANDBOX_PATH}`, token: ctx.sandbox.token };
  fs.writeFileSync(file, JSON.stringify(demo, null, 2) + '\n', { mode: 0o600 });
  return demo;
}
