/**
 * The stock venues of the chains after the first (docs/deployment.md, "Several chains"): each is a
 * chain venue with its own chain (embedded anvil or RPC_URL_<id>), deployment record and storage
 * namespace, so that leases, role status, chain events, orders and balances of one chain never mix
 * with another's and the lease names inside a namespace stay as they are. The first chain (CHAIN_ID)
 * keeps a single-chain deployment's data directory and database exactly: nothing moves on upgrade.
 *
 * A chain venue's configuration is the deployment's with the chain's own id, node, data directory
 * and database location, so that every role and wiring module written for one chain runs on it
 * unchanged (they find their files under the chain's directory, their rows in its namespace).
 */
import path from 'node:path';
import type { AppConfig, StockChainSetting } from '../config/app-config.ts';
import { ValidationError } from '../errors/app-error.ts';

/** DATA_DIR/chains/<chainId>: a chain venue's anvil state, deployment record and SQLite database. */
export function chainDataDir(config: Pick<AppConfig, 'dataDir'>, chainId: number): string {
  return path.join(config.dataDir, 'chains', String(chainId));
}

/**
 * The PostgreSQL schema of a chain venue: `<DATABASE_SCHEMA or public>_c<chainId>` (created if
 * missing). The first chain stays in DATABASE_SCHEMA (or the connection's search_path).
 */
export function chainDatabaseSchema(config: Pick<AppConfig, 'databaseSchema'>, chainId: number): string {
  return `${config.databaseSchema ?? 'public'}_c${chainId}`;
}

/** The configuration a chain after the first runs with (see the module's note). */
export function chainVenueConfig(config: AppConfig, chain: StockChainSetting): AppConfig {
  const { rpcUrl: _first, anvilPort: _port, deploymentFile: _file, ...shared } = config;
  return {
    ...shared,
    chainId: chain.chainId,
    ...(chain.rpcUrl === undefined ? {} : { rpcUrl: chain.rpcUrl }),
    dataDir: chainDataDir(config, chain.chainId),
    ...(config.databaseUrl === undefined ? {} : { databaseSchema: chainDatabaseSchema(config, chain.chainId) }),
  };
}

/**
 * The configuration of the served chain `chainId` (the deployment's own for the first chain), for
 * the commands that act on one chain (`tokex upgrade --chain`, `tokex status --chain`). A chain
 * the configuration does not serve is refused with the ones it does.
 */
export function servedChainConfig(config: AppConfig, chainId: number): AppConfig {
  const setting = config.stockChains.find((c) => c.chainId === chainId);
  if (!setting) {
    throw new ValidationError('--chain', `chain ${chainId} is not served by this configuration; it serves ${config.stockChains.map((c) => c.chainId).join(', ')} (EMBEDDED_CHAIN_IDS or STOCK_CHAINS, docs/deployment.md "Several chains")`);
  }
  return chainId === config.chainId ? config : chainVenueConfig(config, setting);
}

/** `--chain` of the commands: a comma-separated list of chain ids (one for most commands). */
export function parseChainIds(value: string): number[] {
  const ids = value.split(',').map((part) => {
    const t = part.trim();
    if (!/^\d{1,15}$/.test(t) || Number(t) < 1) throw new ValidationError('--chain', `"${t}" is not a chain id (a positive integer)`);
    return Number(t);
  });
  return [...new Set(ids)];
}
