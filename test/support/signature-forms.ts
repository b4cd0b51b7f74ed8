/**
 * Other encodings of a valid secp256k1 signature, for tests of what a server accepts: the 64-byte
 * compact form of EIP-2098, and the high-s twin (r, n − s, the other v) that recovers the same signer
 * and that Ethereum refuses since EIP-2.
 */
import { parseSignature, type Hex } from 'viem';

export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/**
 * `signature` (65 bytes, low s) as r ‖ yParityAndS. (A high s is mostly above 2²⁵⁵, where the parity
 * bit lives: EIP-2098 has no room for it.)
 */
export function toCompact(signature: Hex): Hex {
  const { r, s, yParity } = parseSignature(signature);
  return `0x${r.slice(2)}${((BigInt(yParity) << 255n) | BigInt(s)).toString(16).padStart(64, '0')}`;
}

/** The malleated twin of a low-s 65-byte `signature`: s → n − s and v 27 ↔ 28. */
export function highS(signature: Hex): Hex {
  const { r, s, yParity } = parseSignature(signature);
  const flipped = SECP256K1_N - BigInt(s);
  return `0x${r.slice(2)}${flipped.toString(16).padStart(64, '0')}${(yParity === 0 ? 28 : 27).toString(16)}`;
}
