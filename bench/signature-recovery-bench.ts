/**
 * secp256k1 signer recovery alone, one core: the native path (`recoverSigner`, libsecp256k1) over
 * BENCH_RECOVER_SIGNATURES (default 20 000) pre-computed signatures, and viem's pure-JS
 * `recoverAddress` over a slice of them. The native figure is the ceiling a signed request's
 * recovery allows; perp-orders-bench.ts reports signed orders end to end as a ratio to it.
 *
 * The signatures are made with the binding's own `ecdsaSign` (tens of µs each, where viem's JS
 * signing would take a minute for 20 000), by several keys over random digests, and a few are
 * checked against viem before the clock starts.
 *
 *   npx tsx bench/signature-recovery-bench.ts
 */
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { bytesToHex, recoverAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { getAddress } from 'viem';
import { nativeRecovery, recoverSigner } from '../src/chain/signature-recovery.ts';
import { checksumAddress } from '../src/chain/address-checksum.ts';

interface NativeSign {
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
}

export interface SignatureRecoveryBenchResult {
  signatures: number;
  nativePerSec: number;
  /** Every round's native rate, the best of which is nativePerSec. */
  nativeRoundsPerSec: number[];
  jsPerSec: number;
  jsSignatures: number;
  /** µs an address checksum over more distinct addresses than viem's LRU holds: viem's getAddress, then address-checksum.ts. */
  checksumUs: { addresses: number; viem: number; wasm: number };
  table: string;
}

/**
 * An address's EIP-55 checksum, µs, over `count` distinct lower-case addresses (more than the 8,192
 * viem's LRU keeps, as a venue with that many traders sees): viem's `getAddress` (pure-JS Keccak
 * behind the LRU), then address-checksum.ts (Keccak in WebAssembly), the best of three rounds each,
 * alternated. A signed order checksums two addresses (its account field and its recovered signer).
 */
function checksumCost(count: number): { addresses: number; viem: number; wasm: number } {
  const addresses = Array.from({ length: count }, () => `0x${randomBytes(20).toString('hex')}`);
  let viem = Infinity;
  let wasm = Infinity;
  let sink = 0;
  for (let r = 0; r < 3; r++) {
    let t0 = process.hrtime.bigint();
    for (const a of addresses) sink += getAddress(a).charCodeAt(5);
    viem = Math.min(viem, Number(process.hrtime.bigint() - t0) / 1e3 / count);
    t0 = process.hrtime.bigint();
    for (const a of addresses) sink += checksumAddress(a).charCodeAt(5);
    wasm = Math.min(wasm, Number(process.hrtime.bigint() - t0) / 1e3 / count);
  }
  if (sink === 0) throw new Error('unreachable');
  return { addresses: count, viem, wasm };
}

/** Each round's rate (the best is the figure; the others show the noise of the shared cores). */
function rounds(count: number, n: number, body: () => void): number[] {
  const rates: number[] = [];
  for (let r = 0; r < count; r++) {
    const t0 = process.hrtime.bigint();
    body();
    rates.push(n / (Number(process.hrtime.bigint() - t0) / 1e9));
  }
  return rates;
}

export async function runSignatureRecoveryBench(opts: { signatures?: number; jsSignatures?: number } = {}): Promise<SignatureRecoveryBenchResult> {
  if (!nativeRecovery) throw new Error('signature recovery bench: the libsecp256k1 binding did not load');
  const n = opts.signatures ?? Number(process.env.BENCH_RECOVER_SIGNATURES ?? 20_000);
  const jsN = Math.min(n, opts.jsSignatures ?? Number(process.env.BENCH_RECOVER_JS_SIGNATURES ?? 1_000));
  const native = createRequire(import.meta.url)('secp256k1/bindings') as NativeSign;
  const keys = Array.from({ length: 16 }, () => randomBytes(32));
  const cases: Array<{ digest: Hex; signature: Hex; signer: string }> = [];
  const signers = keys.map((k) => privateKeyToAccount(bytesToHex(k)).address);
  for (let i = 0; i < n; i++) {
    const digest = randomBytes(32);
    const k = i % keys.length;
    const { signature, recid } = native.ecdsaSign(digest, keys[k]);
    cases.push({ digest: bytesToHex(digest), signature: `${bytesToHex(signature)}${(27 + recid).toString(16)}` as Hex, signer: signers[k] });
  }
  for (const c of cases.slice(0, 32)) {
    const js = await recoverAddress({ hash: c.digest, signature: c.signature });
    if (js !== c.signer || recoverSigner(c.digest, c.signature) !== c.signer) throw new Error('signature recovery bench: native and viem disagree');
  }
  let sink = 0;
  const nativeRoundsPerSec = rounds(3, n, () => {
    for (const c of cases) sink += recoverSigner(c.digest, c.signature).length;
  });
  const nativePerSec = Math.max(...nativeRoundsPerSec);
  const slice = cases.slice(0, jsN);
  let jsPerSec = 0;
  for (let r = 0; r < 2; r++) {
    const t0 = process.hrtime.bigint();
    for (const c of slice) sink += (await recoverAddress({ hash: c.digest, signature: c.signature })).length;
    jsPerSec = Math.max(jsPerSec, jsN / (Number(process.hrtime.bigint() - t0) / 1e9));
  }
  if (sink === 0) throw new Error('unreachable');
  const checksumUs = checksumCost(Number(process.env.BENCH_CHECKSUM_ADDRESSES ?? 20_000));
  const table = [
    '| figure | value |',
    '| --- | ---: |',
    `| signer recovery, native libsecp256k1 (recoverSigner, ${n} signatures, one core) | ${nativePerSec.toFixed(0)}/s (${(1e6 / nativePerSec).toFixed(1)} µs) |`,
    `| signer recovery, viem recoverAddress in JS (${jsN} signatures, one core) | ${jsPerSec.toFixed(0)}/s (${(1e6 / jsPerSec).toFixed(0)} µs) |`,
    `| native ÷ JS | ${(nativePerSec / jsPerSec).toFixed(1)}× |`,
    `| an address's EIP-55 checksum over ${checksumUs.addresses} distinct addresses (past viem's LRU of 8,192): viem getAddress / Keccak in wasm (address-checksum.ts), µs | ${checksumUs.viem.toFixed(1)} / ${checksumUs.wasm.toFixed(1)} |`,
  ].join('\n');
  return { signatures: n, nativePerSec, nativeRoundsPerSec, jsPerSec, jsSignatures: jsN, checksumUs, table };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await runSignatureRecoveryBench();
  console.log(r.table);
}
