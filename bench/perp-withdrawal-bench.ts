/**
 * Perpetual withdrawals paid by the vault, before issue 43 and after (BENCH_ONLY=perp-withdrawals):
 * the same operator pays `payments` withdrawals on one anvil, on the MarginVault of 6a0f45b (the
 * operator's `withdraw(account, amount, id)`, checked against nothing but the vault's balance) and on
 * this release's (`payWithdrawal(request, signature)`: the wallet's EIP-712 signature, ERC-1271 aware,
 * the cap of the period, the pause and the freeze, the operator's activity noted). Each round sends
 * every payment of a side at once (the pool mined block by block, as sendAllCalls does), the sides'
 * order alternating by round, so the machine's load weighs on both alike. The figures: payments a
 * second, gas and anvil+bench CPU a payment, with ÷ before.
 *
 * The signatures are made before the clock starts: a wallet signs its request in its own process,
 * and the API verifies it once at the request (a cost of the order path's kind, measured in the
 * perp-orders section); what the venue pays per withdrawal on chain is what this measures.
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { encodeFunctionData, keccak256, parseUnits, toHex, type Abi, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { PERP_DOMAIN_NAME, PERP_DOMAIN_VERSION, WITHDRAWAL_FIELDS } from '@tokex/contract';
import { cashTokenAbi, marginVaultAbi } from '../src/chain/abi/generated/index.ts';
import { ANVIL_ACCOUNTS, ANVIL_CHAIN_ID, OPERATOR_ACCOUNT } from '../src/chain/anvil-accounts.ts';
import { startAnvil } from '../src/chain/anvil-process.ts';
import { createChainClients, type ChainPublicClient } from '../src/chain/chain-client.ts';
import { ensureVenues, stockVenueDeployer } from '../src/chain/deploy-contracts.ts';
import { perpDeploymentOf, perpVenueDeployer } from '../src/chain/deploy-perp-venue.ts';
import { DEMO_SYMBOLS } from '../src/marketdata/symbol-catalog.ts';
import { deployLegacyVenue } from '../test/support/legacy-venue.ts';
import { sendAllCalls, type RpcCall } from './bench-chain.ts';
import { NO_PROXY_COMMIT } from './upgrade-bench.ts';

export interface PerpWithdrawalBenchOptions {
  /** Payments a side a round. Default 300. */
  payments?: number;
  /** Measured rounds (after one warm-up round). Default 4. */
  rounds?: number;
  print?: (line: string) => void;
}

type Side = 'before' | 'after';

interface Round {
  payments: number;
  ms: number;
  gasUsed: bigint;
  cpuMs: number;
}

export interface PerpWithdrawalBenchResult {
  rounds: Record<Side, Round[]>;
  paymentsPerSecondRatio: number;
  gasRatio: number;
  cpuRatio: number;
  table: string;
}

/** CPU ms of process `pid` so far (user + system, from /proc). */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

export async function runPerpWithdrawalBench(opts: PerpWithdrawalBenchOptions = {}): Promise<PerpWithdrawalBenchResult> {
  const payments = opts.payments ?? 300;
  const roundsWanted = opts.rounds ?? 4;
  const print = opts.print ?? ((line: string) => console.log(line));
  const anvil = await startAnvil({ chainId: ANVIL_CHAIN_ID });
  try {
    const { publicClient, walletClient } = createChainClients({ rpcUrl: anvil.rpcUrl, chainId: ANVIL_CHAIN_ID, operatorPrivateKey: OPERATOR_ACCOUNT.privateKey, pollingIntervalMs: 20, timeoutMs: 60_000 });
    const operator = walletClient!.account.address;
    const user = ANVIL_ACCOUNTS[0];
    const total = BigInt(payments * (roundsWanted + 1)) * parseUnits('1', 6);

    // Before: 6a0f45b's vault (the deployer is its operator).
    const legacy = await deployLegacyVenue({ commit: NO_PROXY_COMMIT, publicClient, walletClient: walletClient!, symbols: DEMO_SYMBOLS.slice(0, 1), demoWallets: [user.address] });
    const before = legacy.record.venues.perp.contracts as { marginVault: Address; collateralToken: Address };
    // After: this release's venues, the deployer made the vault's operator.
    const { record } = await ensureVenues({
      publicClient,
      walletClient: walletClient!,
      record: { chainId: ANVIL_CHAIN_ID, venues: {} },
      venues: [stockVenueDeployer({ symbols: DEMO_SYMBOLS.slice(0, 1), demoWallets: [user.address] }), perpVenueDeployer({ operators: [operator], withdrawalCap: { amount: total * 2n, periodSeconds: 86_400 } })],
    });
    const after = perpDeploymentOf(record)!.contracts;

    // The user deposits what the rounds pay out into each vault.
    const userWallet = createChainClients({ rpcUrl: anvil.rpcUrl, chainId: ANVIL_CHAIN_ID, operatorPrivateKey: user.privateKey, pollingIntervalMs: 20 }).walletClient!;
    for (const v of [before, after]) {
      for (const [fn, args] of [['approve', [v.marginVault, total]], ['deposit', [total]]] as const) {
        const hash = fn === 'approve'
          ? await userWallet.writeContract({ address: v.collateralToken, abi: cashTokenAbi, functionName: 'approve', args: args as readonly [Address, bigint] })
          : await userWallet.writeContract({ address: v.marginVault, abi: marginVaultAbi, functionName: 'deposit', args: args as readonly [bigint] });
        if ((await publicClient.waitForTransactionReceipt({ hash })).status !== 'success') throw new Error(`perp withdrawal bench: ${fn} failed`);
      }
    }

    const legacyAbi = legacy.artifacts.MarginVault.abi as Abi;
    const block = await publicClient.getBlock();
    const fees = { maxFeePerGas: toHex(block.baseFeePerGas! * 200n), maxPriorityFeePerGas: toHex(1n) };
    let nonce = await publicClient.getTransactionCount({ address: operator, blockTag: 'pending' });
    let seq = 0;
    const signer = privateKeyToAccount(user.privateKey);
    const deadline = block.timestamp + 86_400n;
    const amount = parseUnits('1', 6);

    /** `n` payments of a side as unsigned operator transactions (the wallet's signatures made here, untimed). */
    const calls = async (side: Side, n: number): Promise<RpcCall[]> => {
      const out: RpcCall[] = [];
      for (let i = 0; i < n; i++) {
        const withdrawalId = keccak256(toHex(`bench/perp-withdrawal/${side}/${seq++}`));
        let data: Hex;
        if (side === 'before') {
          data = encodeFunctionData({ abi: legacyAbi, functionName: 'withdraw', args: [user.address, amount, withdrawalId] });
        } else {
          const request = { account: user.address, recipient: user.address, amount, withdrawalId, deadline };
          const signature = await signer.signTypedData({
            domain: { name: PERP_DOMAIN_NAME, version: PERP_DOMAIN_VERSION, chainId: ANVIL_CHAIN_ID, verifyingContract: after.marginVault },
            types: { Withdrawal: WITHDRAWAL_FIELDS },
            primaryType: 'Withdrawal',
            message: request,
          });
          data = encodeFunctionData({ abi: marginVaultAbi, functionName: 'payWithdrawal', args: [request, signature] });
        }
        out.push({ method: 'eth_sendTransaction', params: [{ from: operator, to: side === 'before' ? before.marginVault : after.marginVault, data, gas: toHex(200_000n), nonce: toHex(nonce++), ...fees }] });
      }
      return out;
    };

    const pay = async (side: Side, n: number): Promise<Round> => {
      const batch = await calls(side, n);
      const own0 = process.cpuUsage();
      const cpu0 = cpuMsOf(anvil.pid);
      const t0 = performance.now();
      const hashes = await sendAllCalls(anvil.rpcUrl, publicClient as ChainPublicClient, batch, 500, `perp withdrawal bench (${side})`);
      const ms = performance.now() - t0;
      const own = process.cpuUsage(own0);
      const cpuMs = cpuMsOf(anvil.pid) - cpu0 + (own.user + own.system) / 1000;
      const receipts = await Promise.all(hashes.map((hash) => publicClient.getTransactionReceipt({ hash })));
      return { payments: n, ms, gasUsed: receipts.reduce((g, r) => g + r.gasUsed, 0n), cpuMs };
    };

    // Warm-up (first touches of each vault's storage, the JIT).
    await pay('before', payments);
    await pay('after', payments);
    const rounds: Record<Side, Round[]> = { before: [], after: [] };
    for (let r = 0; r < roundsWanted; r++) {
      const sides: Side[] = r % 2 === 0 ? ['before', 'after'] : ['after', 'before'];
      const line: string[] = [];
      for (const side of sides) {
        const x = await pay(side, payments);
        rounds[side].push(x);
        line.push(`${side} ${Math.round(x.payments / (x.ms / 1000))} payments/s, ${Number(x.gasUsed / BigInt(x.payments))} gas and ${((x.cpuMs * 1000) / x.payments).toFixed(0)} µs CPU a payment`);
      }
      print(`withdrawal round ${r + 1}/${roundsWanted}, ${payments} payments a side: ${line.join('; ')}`);
    }
    const rate = (xs: Round[]) => sum(xs.map((x) => x.payments)) / (sum(xs.map((x) => x.ms)) / 1000);
    const gas = (xs: Round[]) => Number(xs.reduce((g, x) => g + x.gasUsed, 0n)) / sum(xs.map((x) => x.payments));
    const cpu = (xs: Round[]) => (sum(xs.map((x) => x.cpuMs)) * 1000) / sum(xs.map((x) => x.payments));
    const paid = await publicClient.readContract({ address: after.marginVault, abi: marginVaultAbi, functionName: 'withdrawnOf', args: [user.address] });
    if (paid !== amount * BigInt(payments * (roundsWanted + 1))) throw new Error(`perp withdrawal bench: the vault paid ${paid}, not every payment`);
    const result = {
      rounds,
      paymentsPerSecondRatio: rate(rounds.after) / rate(rounds.before),
      gasRatio: gas(rounds.after) / gas(rounds.before),
      cpuRatio: cpu(rounds.after) / cpu(rounds.before),
    };
    const table = [
      '| figure | before (6a0f45b) | after | after ÷ before |',
      '| --- | ---: | ---: | ---: |',
      `| vault payments a second | ${rate(rounds.before).toFixed(0)} | ${rate(rounds.after).toFixed(0)} | ${result.paymentsPerSecondRatio.toFixed(3)} |`,
      `| gas a payment | ${gas(rounds.before).toFixed(0)} | ${gas(rounds.after).toFixed(0)} | ${result.gasRatio.toFixed(3)} |`,
      `| anvil + bench CPU a payment, µs | ${cpu(rounds.before).toFixed(0)} | ${cpu(rounds.after).toFixed(0)} | ${result.cpuRatio.toFixed(3)} |`,
    ].join('\n');
    return { ...result, table };
  } finally {
    await anvil.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const r = await runPerpWithdrawalBench({ payments: Number(process.env.BENCH_PAYMENTS ?? 300), rounds: Number(process.env.BENCH_ROUNDS ?? 4) });
  console.log(r.table);
}
