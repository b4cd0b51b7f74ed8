/**
 * Keccak-256 on the request path, in WebAssembly (hash-wasm). Node's crypto has SHA3-256 but not
 * Keccak-256 (the padding differs), and the pure-JS Keccak viem uses (@noble/hashes) took 17 µs for
 * an 8-byte string and 62 µs for an order's 384-byte struct on these machines, against 1.7 and
 * 2.7 µs here: an EIP-712 order digest is nine of them, and the public key's address one more.
 * viem keeps hashing everything off the hot path; typed-data.test.ts and keccak.test.ts hold the
 * two equal.
 *
 * One hasher instance serves the whole thread: each call runs init, update and digest
 * synchronously, so no two calls interleave.
 */
import { createKeccak } from 'hash-wasm';
import type { Hex } from 'viem';

const hasher = await createKeccak(256);

/** keccak256 of bytes. */
export function keccak256Bytes(data: Uint8Array): Uint8Array {
  hasher.init();
  hasher.update(data);
  return hasher.digest('binary');
}

/** keccak256 of bytes as 0x hex. */
export function keccak256Hex(data: Uint8Array): Hex {
  hasher.init();
  hasher.update(data);
  return `0x${hasher.digest('hex')}`;
}

/**
 * keccak256 of a string's UTF-8 encoding, as EIP-712 hashes a `string` field and viem's
 * `keccak256(stringToHex(s))` does: encoded by Node (a lone surrogate becomes U+FFFD, as in
 * TextEncoder), not by hash-wasm's own string path.
 */
export function keccak256Utf8(s: string): Uint8Array {
  return keccak256Bytes(Buffer.from(s, 'utf8'));
}
