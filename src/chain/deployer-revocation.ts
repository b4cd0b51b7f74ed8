/**
 * The admin key out of every operator role (issue 60; docs/security.md, "Who holds which role").
 * Venues deployed by 0.2.0 before this change made the deployer an operator of the StockRouter, the
 * Cashier and the DividendDistributor (and a migration copied it onto the new MarginVault and
 * ReserveRegistry): with the timelock in force it could still settle, expire users' orders and pay
 * queued cash at once. The admin's start revokes it, as an owner change like any other: through the
 * venue's timelock (scheduled, executed once the delay has passed, visible in GET config meanwhile).
 *
 * The deployer stays an operator only where it is the configured role key itself (the shared key
 * standing in for the executor's or the perp operator's own: RPC_URL, one process, no role key).
 */
import { getAddress, type Abi, type Address } from 'viem';
import { AppError } from '../errors/app-error.ts';
import { cashierAbi, dividendDistributorAbi, marginVaultAbi, reserveRegistryAbi, stockRouterAbi } from './abi/generated/index.ts';
import { toChainError, type ChainPublicClient, type ChainWalletClient } from './chain-client.ts';
import type { DeploymentRecord } from './deployment-file.ts';
import { ownerCalls, type OwnerCallResult, type OwnerCallSpec } from './owner-actions.ts';

/** The contracts with operators, by venue and record path. */
const OPERATED: ReadonlyArray<{ venue: 'stock' | 'perp'; path: string; abi: Abi }> = [
  { venue: 'stock', path: 'stockRouter', abi: stockRouterAbi },
  { venue: 'stock', path: 'cashier', abi: cashierAbi },
  { venue: 'stock', path: 'dividendDistributor', abi: dividendDistributorAbi },
  { venue: 'perp', path: 'marginVault', abi: marginVaultAbi },
  { venue: 'perp', path: 'reserveRegistry', abi: reserveRegistryAbi },
];

export interface DeployerRevocation {
  /** `venue path` of each contract the deployer was revoked on now. */
  revoked: string[];
  /** `venue path` of each revocation scheduled in a timelock and not executable yet. */
  scheduled: string[];
  /** The timelock's answers for `scheduled` (when each is executable). */
  pending: OwnerCallResult[];
}

/**
 * Revokes the admin wallet's operator role on every venue contract that has one, except where the
 * admin's address is the venue's configured operator (`operators.stock`: the executor's address;
 * `operators.perp`: the perp operator's). Idempotent: a contract where it is no operator is left
 * alone, and a revocation already scheduled is found again (owner-actions' salts), not scheduled twice.
 */
export async function revokeDeployerOperator(params: {
  publicClient: ChainPublicClient;
  wallet: ChainWalletClient;
  record: DeploymentRecord;
  operators: { stock?: readonly (Address | undefined)[]; perp?: readonly (Address | undefined)[] };
}): Promise<DeployerRevocation> {
  const { publicClient, wallet, record } = params;
  const me = getAddress(wallet.account.address);
  const out: DeployerRevocation = { revoked: [], scheduled: [], pending: [] };
  try {
    for (const venue of ['stock', 'perp'] as const) {
      const section = record.venues[venue];
      if (!section) continue;
      // A venue from before the proxies is the migration's (which ends with the operators configured).
      if (section.release === undefined) continue;
      const configured = (params.operators[venue] ?? []).filter((a): a is Address => a !== undefined).map((a) => a.toLowerCase());
      if (configured.includes(me.toLowerCase())) continue;
      const calls: OwnerCallSpec[] = [];
      const paths: string[] = [];
      for (const c of OPERATED.filter((x) => x.venue === venue)) {
        const address = (section.contracts as Record<string, unknown>)[c.path];
        if (typeof address !== 'string') continue;
        const isOperator = (await publicClient.readContract({ address: address as Address, abi: c.abi, functionName: 'isOperator', args: [me] })) as boolean;
        if (!isOperator) continue;
        calls.push({ target: address as Address, abi: c.abi, functionName: 'setOperator', args: [me, false] });
        paths.push(`${venue} ${c.path}`);
      }
      if (calls.length === 0) continue;
      const r = await ownerCalls({ publicClient, wallet, calls, label: `${venue}: the deployer is no operator` });
      if (r.done) out.revoked.push(...paths);
      else {
        out.scheduled.push(...paths);
        out.pending.push(...r.results.filter((x) => !x.done));
      }
    }
    return out;
  } catch (err) {
    throw err instanceof AppError ? err : toChainError(err);
  }
}
