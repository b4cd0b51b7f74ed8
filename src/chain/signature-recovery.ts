/**
 * The signer of a secp256k1 signature over a 32-byte digest, on libsecp256k1 through the `secp256k1`
 * package's native binding: about 90 µs a recovery, address checksum included, against about
 * 2.7 ms for viem's pure-JS `recoverAddress` (bench/signature-recovery-bench.ts); that was most of
 * a signed request's CPU (perpetual orders, API-key creation, One-Click Trade and session signers
 * all recover through `typed-data.ts`).
 *
 * Acceptance is viem's `recoverAddress` on a hex signature, exactly, so swapping one for the other
 * changes no answer (signature-recovery.test.ts checks this property on random and malformed input):
 * - 65 bytes r ‖ s ‖ v, v 27 or 28 or 0 or 1 (any other v is refused);
 * - r and s in [1, n); an r that is no curve point's x, or a recovery giving the point at infinity,
 *   is refused;
 * - a high s is ACCEPTED here, as by viem and the ecrecover precompile. EIP-2's low-s rule and the
 *   EIP-2098 64-byte compact form are policy, applied before recovery by `parseSignature` in
 *   typed-data.ts, which turns every accepted form into the canonical 65 bytes;
 * - the 64-byte compact form is refused here, as viem's `recoverAddress` refuses it.
 * Inputs viem would read oddly (odd-length hex, which it pads; a non-hex string, which it encodes as
 * UTF-8; a digest that is not 32 bytes, which it truncates or pads) are refused here: they never come
 * out of `parseSignature` or `hashTypedData`. A signature is refused with the ValidationError
 * `signature: is not a valid signature` (a digest with `digest: …`), which quotes none of it.
 *
 * The binding is loaded explicitly (`secp256k1/bindings`), not through the package's index, which
 * silently drops to its pure-JS `elliptic` path when the native build is missing. If it does not
 * load, the service keeps working on viem's `recoverAddress` (the same answers, ~30× the CPU):
 * `recoverSignerAsync` and typed-data.ts switch to it, and the process prints one Node warning
 * (code TOKEX_NATIVE_SECP256K1) to stderr when this module is first imported, at start-up; it is
 * a process warning rather than a pino line because no logger exists yet at import time.
 * `nativeRecovery` tells which path runs. The synchronous `recoverSigner` needs the binding and
 * throws a plain Error without it.
 */
import { createRequire } from 'node:module';
import { recoverAddress, type Address, type Hex } from 'viem';
import { checksumAddressOfBytes } from './address-checksum.ts';
import { ValidationError } from '../errors/app-error.ts';
import { keccak256Bytes } from './keccak.ts';

/** The part of the binding's API used here (lib/index.js of secp256k1 5). */
interface NativeSecp256k1 {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed: false): Uint8Array;
}

function loadNative(): NativeSecp256k1 | undefined {
  try {
    const binding = createRequire(import.meta.url)('secp256k1/bindings') as NativeSecp256k1;
    if (typeof binding.ecdsaRecover !== 'function') throw new Error('secp256k1/bindings has no ecdsaRecover');
    return binding;
  } catch (err) {
    process.emitWarning(
      `libsecp256k1 binding did not load (${(err as Error).message}); signatures are recovered in JavaScript, about 25 times slower`,
      { code: 'TOKEX_NATIVE_SECP256K1' },
    );
    return undefined;
  }
}

const native = loadNative();

/** True when signatures are recovered by libsecp256k1; false means viem's JS recovery (see above). */
export const nativeRecovery: boolean = native !== undefined;

const SIGNATURE_65_RE = /^0x[0-9a-fA-F]{130}$/;
const DIGEST_RE = /^0x[0-9a-fA-F]{64}$/;

const invalid = () => new ValidationError('signature', 'is not a valid signature');

/** The recovery id of a v byte as viem reads it (0/1 or 27/28), or -1. */
function recoveryId(signature: string): number {
  const v = parseInt(signature.slice(130, 132), 16);
  if (v === 27 || v === 28) return v - 27;
  if (v === 0 || v === 1) return v;
  return -1;
}

/**
 * The input checks of {@link recoverSigner}, alone: throws exactly the ValidationError it would throw
 * for a malformed digest or signature, else answers the recovery id. The worker pool
 * (signature-recovery-pool.ts) runs them on the calling thread, so a malformed input is refused
 * before it is queued and with the same error object class, field and reason.
 */
export function checkRecoverable(digest: Hex, signature: Hex): number {
  if (typeof digest !== 'string' || !DIGEST_RE.test(digest)) throw new ValidationError('digest', 'must be 0x and 32 bytes in hex');
  if (typeof signature !== 'string' || !SIGNATURE_65_RE.test(signature)) throw invalid();
  const recid = recoveryId(signature);
  if (recid < 0) throw invalid();
  return recid;
}

/** The refusal of a signature libsecp256k1 could not recover (the pool answers it for its workers). */
export const invalidSignature = invalid;

/**
 * The checksummed address whose key signed `digest` (32 bytes) with `signature` (65 bytes hex);
 * ValidationError `signature: is not a valid signature` otherwise. Synchronous, on libsecp256k1;
 * throws a plain Error when the native binding is not loaded (use {@link recoverSignerAsync}).
 */
export function recoverSigner(digest: Hex, signature: Hex): Address {
  if (!native) throw new Error('recoverSigner: the libsecp256k1 binding is not loaded (use recoverSignerAsync)');
  const recid = checkRecoverable(digest, signature);
  let publicKey: Uint8Array;
  try {
    // The binding refuses r or s ≥ n (parse), r or s = 0, an r off the curve and infinity (recover).
    publicKey = native.ecdsaRecover(Buffer.from(signature.slice(2, 130), 'hex'), recid, Buffer.from(digest.slice(2), 'hex'), false);
  } catch {
    throw invalid();
  }
  // Uncompressed key: 0x04 ‖ x ‖ y; the address is the last 20 bytes of keccak256(x ‖ y).
  return checksumAddressOfBytes(keccak256Bytes(publicKey.subarray(1)).subarray(12));
}

/**
 * {@link recoverSigner} when the binding is loaded; otherwise {@link recoverSignerJs}.
 */
export async function recoverSignerAsync(digest: Hex, signature: Hex): Promise<Address> {
  return native ? recoverSigner(digest, signature) : recoverSignerJs(digest, signature);
}

/**
 * The fallback: viem's `recoverAddress` behind the same input checks as {@link recoverSigner}, so the
 * two accept and refuse the same signatures and refuse them with the same error.
 */
export async function recoverSignerJs(digest: Hex, signature: Hex): Promise<Address> {
  if (typeof digest !== 'string' || !DIGEST_RE.test(digest)) throw new ValidationError('digest', 'must be 0x and 32 bytes in hex');
  if (typeof signature !== 'string' || !SIGNATURE_65_RE.test(signature) || recoveryId(signature) < 0) throw invalid();
  try {
    return await recoverAddress({ hash: digest, signature });
  } catch {
    throw invalid();
  }
}
