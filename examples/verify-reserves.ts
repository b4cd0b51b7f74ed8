/**
 * Proof of reserves, checked by the user (docs/proof-of-reserves.md): fetches the demo wallet's proof
 * from the perp API (`GET account/proof`), recomputes its leaf and the Merkle-sum path to the root,
 * reads the root and total of that epoch from the ReserveRegistry on chain and the vault's USDC
 * balance, and says whether all three hold. Only viem and the SDK's signed request: nothing here
 * trusts the server's arithmetic, and the contract addresses come from demo.json, not from the API.
 * Run against `npm start`:
 *
 *   npx tsx examples/verify-reserves.ts           (DATA_DIR defaults to ./data)
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPublicClient, encodeAbiParameters, erc20Abi, formatUnits, getAddress, http, keccak256, parseAbi, type Address, type Hex } from 'viem';
import { PerpApiError, PerpClient, type AccountProof } from '@tokex/sdk';

const MAX_SUM = 1n << 128n;

/** The parts a proof is checked from (the API's answer has more). */
export type ProofToCheck = Pick<AccountProof, 'salt' | 'account' | 'equity' | 'pendingWithdrawals' | 'path' | 'root' | 'total'> &
  Partial<Pick<AccountProof, 'deposited' | 'withdrawn'>>;

/**
 * Recomputes the leaf and walks its path: true only when it reaches `root` with sum `total` and every
 * value and sum on the way is in [0, 2^128) (a negative or wrapped sibling could hide liabilities).
 */
export function verifyProof(p: ProofToCheck): boolean {
  try {
    const inRange = (v: bigint) => v >= 0n && v < MAX_SUM;
    const equity = BigInt(p.equity);
    const pending = BigInt(p.pendingWithdrawals);
    if (!inRange(equity) || !inRange(pending) || !inRange(equity + pending)) return false;
    // Since 0.2.0 a leaf also commits the account's vault flows (what the escape hatch settles);
    // an epoch built before has the first four fields only.
    const flows = p.deposited != null && p.withdrawn != null ? [BigInt(p.deposited), BigInt(p.withdrawn)] : [];
    let hash: Hex = keccak256(
      encodeAbiParameters(
        [{ type: 'bytes32' }, { type: 'address' }, { type: 'uint256' }, { type: 'uint256' }, ...flows.map(() => ({ type: 'uint256' as const }))],
        [p.salt, getAddress(p.account), equity, pending, ...flows],
      ),
    );
    let sum = equity + pending;
    for (const step of p.path) {
      const sibling = BigInt(step.sum);
      if (!inRange(sibling) || !inRange(sum + sibling)) return false;
      const [lh, ls, rh, rs] = step.side === 'left' ? [step.hash, sibling, hash, sum] : step.side === 'right' ? [hash, sum, step.hash, sibling] : [];
      if (lh === undefined) return false;
      hash = keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'uint256' }, { type: 'bytes32' }, { type: 'uint256' }], [lh, ls!, rh!, rs!]));
      sum += sibling;
    }
    return hash.toLowerCase() === p.root.toLowerCase() && sum === BigInt(p.total);
  } catch {
    return false;
  }
}

const registryAbi = parseAbi([
  'function rootOf(uint64 epoch) view returns ((uint64 epoch, bytes32 root, uint128 total, uint64 leafCount, uint64 timestamp))',
]);

async function main(): Promise<void> {
  const dataDir = process.env.DATA_DIR ?? 'data';
  const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo.json'), 'utf8'));
  const trader = demo.perp.keys.trader;
  const client = new PerpClient({ baseUrl: demo.perp.baseUrl, apiKey: trader.apiKey, apiSecret: trader.apiSecret, chainId: demo.chainId });

  // The first epoch is posted shortly after the venue starts: wait for it.
  let proof: AccountProof | undefined;
  for (const until = Date.now() + 60_000; proof === undefined; ) {
    try {
      proof = await client.getAccountProof();
    } catch (err) {
      if (!(err instanceof PerpApiError && err.code === 40000) || Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }

  // 1. Inclusion: my leaf, by my own arithmetic, reaches the root and total the API gave.
  if (proof.account.toLowerCase() !== trader.address.toLowerCase()) throw new Error(`the proof is for ${proof.account}, not ${trader.address}`);
  if (!verifyProof(proof)) throw new Error('inclusion FAILED: the leaf and path do not reach the root and total');

  // 2. The root and total of that epoch are the ones on chain (addresses from demo.json, not the API).
  const registry = getAddress(demo.perp.contracts.reserveRegistry) as Address;
  const vault = getAddress(demo.perp.contracts.marginVault) as Address;
  const usdc = getAddress(demo.perp.contracts.collateralToken) as Address;
  if (getAddress(proof.reserveRegistry) !== registry || getAddress(proof.vault) !== vault) throw new Error('the API names other contracts than demo.json');
  const chain = { id: demo.chainId, name: 'tokex', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [demo.rpcUrl] } } };
  const pub = createPublicClient({ chain, transport: http(demo.rpcUrl) });
  const onChain = await pub.readContract({ address: registry, abi: registryAbi, functionName: 'rootOf', args: [BigInt(proof.epoch)] });
  if (onChain.root.toLowerCase() !== proof.root.toLowerCase() || onChain.total !== BigInt(proof.total)) {
    throw new Error(`root on chain FAILED: epoch ${proof.epoch} is ${onChain.root} / ${onChain.total} on chain`);
  }

  // 3. Reserves: the vault holds at least the liabilities.
  const reserves = await pub.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [vault] });
  const x = formatUnits(reserves, proof.decimals);
  const y = formatUnits(onChain.total, proof.decimals);
  if (reserves < onChain.total) throw new Error(`reserves FAILED: ${x} < liabilities ${y}`);
  console.log(`epoch ${proof.epoch}: leaf ${proof.leafIndex} of ${proof.leafCount}, value ${formatUnits(BigInt(proof.value), proof.decimals)} USDC`);
  console.log(`inclusion ok, root on chain ok, reserves ${x} ≥ liabilities ${y} ok`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exitCode = 1;
  });
}
