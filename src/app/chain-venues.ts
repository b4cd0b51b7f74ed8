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
