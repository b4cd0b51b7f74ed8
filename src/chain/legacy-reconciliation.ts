/**
 * The migration's reconciliation and what to do with a surplus (issue 60; docs/upgrades.md,
 * "Deployments from before the proxies"). The new Cashier's and vault's addresses are public (and
 * predictable before they exist), so anyone can send them tokens at any step: the reconciliation
 * checks that each holds at least what it owes and reports the rest as a surplus; it never stops a
 * migration. The Cashier's surplus is credited to the treasury's balance by the owner (the venue's
 * timelock) with `cashierSurplusSweepCalls`; the vault has no owner sweep by design (its owner
 * cannot take collateral), so a surplus there stays as reserves above the liabilities.
 */
import type { Address } from 'viem';
import { cashierAbi, cashTokenAbi, stockAbi } from './abi/generated/index.ts';
import type { ChainPublicClient } from './chain-client.ts';
import type { MigrationJournal, Reconciliation } from './legacy-migration-journal.ts';
import type { OwnerCallSpec } from './owner-actions.ts';

const s = (v: bigint) => v.toString();
const b = (v: string) => BigInt(v);

/**
 * Per token, what is owed against what is held (issue 60): the new Cashier and vault must hold at
 * least what their accounts are owed, and a surplus (tokens anyone can send to their public
 * addresses) is reported, never a failure. What the migration itself credited must equal the
 * snapshot to the unit: each account's `BalanceMigrated`, each stock's supply.
 */
export async function reconcile(client: ChainPublicClient, journal: MigrationJournal): Promise<Reconciliation[]> {
  const out: Reconciliation[] = [];
  const atLeast = (what: string, owed: bigint, held: bigint): Reconciliation => ({ what, before: s(owed), after: s(held), ok: held >= owed, surplus: s(held > owed ? held - owed : 0n) });
  const st = journal.stock;
  if (st?.snapshot && st.deployed) {
    const next = st.deployed.contracts;
    for (const t of st.snapshot.tokens) {
      const after = await client.readContract({ address: t.token, abi: cashTokenAbi, functionName: 'balanceOf', args: [next.cashier] });
      out.push(atLeast(`cash ${t.token} held by the Cashier`, b(t.held), after));
    }
    // What the new Cashier credited each account (its own events, which only the migration emits):
    // users trading on the new venue since do not move it.
    const credited = new Map<string, bigint>();
    const logs = await client.getContractEvents({ address: next.cashier, abi: cashierAbi, eventName: 'BalanceMigrated', fromBlock: BigInt(st.deployed.firstBlockNumber ?? st.deployed.blockNumber) });
    for (const l of logs) {
      const { user, musdAmount } = l.args as { user: Address; musdAmount: bigint };
      credited.set(user.toLowerCase(), (credited.get(user.toLowerCase()) ?? 0n) + musdAmount);
    }
    const owedBefore = st.snapshot.accounts.reduce((n, a) => n + b(a.free) + b(a.locked), 0n);
    const owedAfter = [...credited.values()].reduce((n, v) => n + v, 0n);
    const each = st.snapshot.accounts.every((a) => (credited.get(a.user.toLowerCase()) ?? 0n) === b(a.free) + b(a.locked)) && credited.size === st.snapshot.accounts.filter((a) => b(a.free) + b(a.locked) > 0n).length;
    out.push({ what: 'cash balances (mUSD, free + locked)', before: s(owedBefore), after: s(owedAfter), ok: each && owedBefore === owedAfter });
    for (const x of st.snapshot.stocks) {
      const after = await client.readContract({ address: next.stocks[x.symbol], abi: stockAbi, functionName: 'totalSupply' });
      out.push({ what: `stock ${x.symbol} supply (shares)`, before: x.totalSupply, after: s(after), ok: after === b(x.totalSupply) });
    }
  }
  const pp = journal.perp;
  if (pp?.snapshot && pp.deployed) {
    const token = pp.deployed.contracts.collateralToken as Address;
    const after = await client.readContract({ address: token, abi: cashTokenAbi, functionName: 'balanceOf', args: [pp.deployed.contracts.marginVault as Address] });
    out.push(atLeast(`vault collateral ${token}`, b(pp.owed ?? pp.snapshot.held), after));
  }
  return out;
}

/**
 * The owner calls that credit `amount` (token units) of the Cashier's surplus to the treasury's
 * free balance, as one timelock operation (`ownerCalls`): the timelock becomes the Cashier's router
 * for the batch, credits the treasury as a deposit whose tokens are already held (the surplus), then
 * puts back the minimum, the credit buffer and the router. No token moves; the Cashier's invariant
 * (tokens held = balances + fees + queued) holds again with the surplus gone. `timelock` is the
 * Cashier's owner. Only for an amount the reconciliation reported: the Cashier does not know its
 * own liabilities, so the amount is the caller's (and waits the delay, in GET config, before it applies).
 */
export async function cashierSurplusSweepCalls(params: { publicClient: ChainPublicClient; cashier: Address; token: Address; amount: bigint; timelock: Address }): Promise<OwnerCallSpec[]> {
  const { publicClient: client, cashier, token, amount, timelock } = params;
  const [router, treasury, buffer, config] = await Promise.all([
    client.readContract({ address: cashier, abi: cashierAbi, functionName: 'router' }),
    client.readContract({ address: cashier, abi: cashierAbi, functionName: 'treasury' }),
    client.readContract({ address: cashier, abi: cashierAbi, functionName: 'creditBuffer' }),
    client.readContract({ address: cashier, abi: cashierAbi, functionName: 'tokenConfig', args: [token] }),
  ]);
  const musd = amount * 10n ** BigInt(18 - config.decimals);
  const call = (functionName: string, args: readonly unknown[]): OwnerCallSpec => ({ target: cashier, abi: cashierAbi, functionName, args });
  const lowerMin = config.minAmount > amount;
  return [
    call('setRouter', [timelock]),
    ...(lowerMin ? [call('configureToken', [token, config.enabled, config.decimals, 0n, config.withdrawBuffer])] : []),
    ...(buffer < musd ? [call('setCreditBuffer', [musd])] : []),
    call('creditDeposit', [treasury, token, amount]),
    ...(lowerMin ? [call('configureToken', [token, config.enabled, config.decimals, config.minAmount, config.withdrawBuffer])] : []),
    call('setCreditBuffer', [buffer]),
    call('setRouter', [router]),
  ];
}
