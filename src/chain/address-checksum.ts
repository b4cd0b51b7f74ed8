/**
 * EIP-55 checksummed addresses on the request path, on the WebAssembly Keccak (keccak.ts). viem's
 * `getAddress` and `checksumAddress` hash in pure JavaScript (@noble/hashes) behind an LRU of 8,192
 * addresses: 2.6 µs an address it holds, 30–62 µs one it does not (these 2-core machines). A signed
 * order checksums two addresses (its `account` field and the recovered signer), so a venue whose
 * traders outnumber the LRU paid 60–120 µs an order, about a signature recovery, which a bench of
 * 16 wallets never shows (docs/performance.md, "Checksums off the LRU"). Here an address costs the
 * same whoever sent it. address-checksum.test.ts holds the answers equal to viem's.
 */
import type { Address } from 'viem';
import { keccak256Bytes } from './keccak.ts';

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
// One buffer for the thread: each call fills and hashes it synchronously, so no two calls interleave.
const ascii = new Uint8Array(40);
const digits = new Uint16Array(42);
digits[0] = 0x30; // '0'
digits[1] = 0x78; // 'x'

/** True for `0x` and 40 hex digits in any case (viem's `isAddress` with `strict: false`). */
export function isAddressText(value: unknown): value is string {
  return typeof value === 'string' && ADDRESS_RE.test(value);
}

/**
 * The EIP-55 spelling of `address` (0x and 40 hex digits, any case; the caller has checked it with
 * {@link isAddressText}).
 */
export function checksumAddress(address: string): Address {
  for (let i = 0; i < 40; i++) {
    const c = address.charCodeAt(i + 2);
    ascii[i] = c >= 0x41 && c <= 0x46 ? c + 0x20 : c; // A–F → a–f
  }
  return checksumOfAscii();
}

const HEX_DIGITS = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));

/** The checksummed address of 20 bytes (a public key's hash tail, say), without a hex string between. */
export function checksumAddressOfBytes(bytes: Uint8Array): Address {
  for (let i = 0; i < 20; i++) {
    ascii[2 * i] = HEX_DIGITS[bytes[i] >> 4];
    ascii[2 * i + 1] = HEX_DIGITS[bytes[i] & 0x0f];
  }
  return checksumOfAscii();
}

/** EIP-55 over the lower-case digits in `ascii`: a letter is upper case where its nibble of their keccak256 is 8 or more. */
function checksumOfAscii(): Address {
  const hash = keccak256Bytes(ascii);
  for (let i = 0; i < 40; i++) {
    const c = ascii[i];
    const nibble = i % 2 === 0 ? hash[i >> 1] >> 4 : hash[i >> 1] & 0x0f;
    digits[i + 2] = c >= 0x61 && nibble >= 8 ? c - 0x20 : c;
  }
  return String.fromCharCode.apply(null, digits as unknown as number[]) as Address;
}
