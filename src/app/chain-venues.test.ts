import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/app-config.ts';
import { chainVenueConfig, parseChainIds, servedChainConfig } from './chain-venues.ts';
import { deploymentPath } from './chain-wiring.ts';
import { sqlitePathOf } from './storage-wiring.ts';

describe('a chain venue after the first', () => {
  it('has its own data directory, deployment record and SQLite file, never the first chain\'s node, port or record', () => {
    const config = loadConfig({ DATA_DIR: '/srv/tokex', EMBEDDED_CHAIN_IDS: '31337,31338', ANVIL_PORT: '8545', DEPLOYMENT_FILE: '/srv/first.json' });
    const second = chainVenueConfig(config, config.stockChains[1]);
    expect(second.chainId).toBe(31338);
    expect(second.dataDir).toBe(path.resolve('/srv/tokex/chains/31338'));
    expect(deploymentPath(second)).toBe(path.resolve('/srv/tokex/chains/31338/deployments/31338.json'));
    expect(sqlitePathOf(second)).toBe(path.resolve('/srv/tokex/chains/31338/tokex.sqlite'));
    expect(second.anvilPort).toBeUndefined();
    expect(second.rpcUrl).toBeUndefined();
    expect(second.databaseSchema).toBeUndefined();
    // The first chain is left exactly where a single-chain deployment has it.
    expect(deploymentPath(config)).toBe('/srv/first.json');
    expect(sqlitePathOf(config)).toBe(path.resolve('/srv/tokex/tokex.sqlite'));
  });

  it('takes its node from RPC_URL_<id> and, on PostgreSQL, the schema <DATABASE_SCHEMA or public>_c<id>', () => {
    const env = { STOCK_CHAINS: '8453,1', RPC_URL: 'https://base.example', RPC_URL_1: 'https://eth.example', DATABASE_URL: 'postgres://db/tokex' };
    const config = loadConfig(env);
    const eth = chainVenueConfig(config, config.stockChains[1]);
    expect([eth.chainId, eth.rpcUrl, eth.databaseSchema]).toEqual([1, 'https://eth.example', 'public_c1']);
    const named = loadConfig({ ...env, DATABASE_SCHEMA: 'tokex' });
    expect(chainVenueConfig(named, named.stockChains[1]).databaseSchema).toBe('tokex_c1');
    expect(named.databaseSchema).toBe('tokex');
  });
});

describe('the chain a command names (--chain)', () => {
  it('is the deployment itself for the first chain, its chain venue for another, and refused when not served', () => {
    const config = loadConfig({ DATA_DIR: '/srv/tokex', EMBEDDED_CHAIN_IDS: '31337,31338' });
    expect(servedChainConfig(config, 31337)).toBe(config);
    expect(servedChainConfig(config, 31338)).toEqual(chainVenueConfig(config, config.stockChains[1]));
    expect(() => servedChainConfig(config, 8453)).toThrow('--chain: chain 8453 is not served by this configuration; it serves 31337, 31338 (EMBEDDED_CHAIN_IDS or STOCK_CHAINS, docs/deployment.md "Several chains")');
  });

  it('reads a comma-separated list of chain ids, once each', () => {
    expect(parseChainIds('8453, 1,8453')).toEqual([8453, 1]);
    expect(() => parseChainIds('base')).toThrow('--chain: "base" is not a chain id (a positive integer)');
    expect(() => parseChainIds('0')).toThrow('--chain: "0" is not a chain id (a positive integer)');
  });
});
