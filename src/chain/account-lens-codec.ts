/**
 * `AccountLens.getAccount` without viem's generic ABI coder, for the balance reads on the API's
 * request path: viem's decodeFunctionResult walks the ABI description for every word of the
 * answer (arrays of structs here) and cost a sixth of a balance request, more than the eth_call's
 * own HTTP exchange. The layout is fixed by IAccountLens.sol; a test checks both directions against
 * viem on random values, and the selector comes from the generated ABI.
 */
import { checksumAddress, getAbiItem, toFunctionSelector, type Abi, type AbiFunction, type Address, type Hex } from 'viem';
import { CallEncodingError } from './static-call-encoder.ts';

export interface LensStockAccount {
  stock: Address;
  wallet: bigint;
  exchange: bigint;
  locked: bigint;
  allowance: bigint;
}

export interface LensCashTokenAccount {
  token: Address;
  wallet: bigint;
  allowance: bigint;
}

export interface LensAccount {
  blockNumber: bigint;
  freeMusd: bigint;
  lockedMusd: bigint;
  stocks: LensStockAccount[];
  cashTokens: LensCashTokenAccount[];
}

export class LensDecodingError extends Error {
  constructor(reason: string) {
    super(`AccountLens.getAccount: ${reason}`);
    this.name = 'LensDecodingError';
  }
}

const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const WORD = 64;

function word(n: number | bigint): string {
  return n.toString(16).padStart(WORD, '0');
}

function addressWord(a: string, index: number): string {
  if (!ADDRESS_RE.test(a)) throw new CallEncodingError('getAccount', index, 'is not an address');
  return '000000000000000000000000' + a.slice(2).toLowerCase();
}

/**
 * Calldata for `getAccount(user, stocks, cashTokens, spender)` with the two lists fixed: they are
 * the deployment's, so their encoding is built once and each call only fills in two words.
 */
export function getAccountEncoder(abi: Abi, stocks: readonly string[], cashTokens: readonly string[]): (user: string, spender: string) => Hex {
  const item = getAbiItem({ abi, name: 'getAccount' }) as AbiFunction | undefined;
  if (!item || item.type !== 'function') throw new Error('getAccount: no such function in the ABI');
  const selector = toFunctionSelector(item);
  // Head: user, offset of stocks, offset of cashTokens, spender; then each array as length + items.
  const stocksAt = 4 * 32;
  const cashAt = stocksAt + 32 * (1 + stocks.length);
  const stocksTail = word(stocks.length) + stocks.map((a) => addressWord(a, 1)).join('');
  const cashTail = word(cashTokens.length) + cashTokens.map((a) => addressWord(a, 2)).join('');
  const middle = word(stocksAt) + word(cashAt);
  const tail = stocksTail + cashTail;
  return (user, spender) => `${selector}${addressWord(user, 0)}${middle}${addressWord(spender, 3)}${tail}` as Hex;
}

/** Checksummed forms of the addresses seen (the deployment's few tokens), so each is hashed once. */
const checksummed = new Map<string, Address>();

/** The 64 hex digits of word `i` of `data` (after the 0x). */
function wordAt(data: string, words: number, i: number): string {
  if (i < 0 || i >= words) throw new LensDecodingError('offset out of range');
  return data.slice(2 + i * WORD, 2 + (i + 1) * WORD);
}

function uintAt(data: string, words: number, i: number): bigint {
  return BigInt('0x' + wordAt(data, words, i));
}

/** An offset or length: small, or the answer is malformed (rather than a huge allocation). */
function smallAt(data: string, words: number, i: number): number {
  const v = uintAt(data, words, i);
  if (v > BigInt(words * 32)) throw new LensDecodingError('offset or length out of range');
  return Number(v);
}

/** A byte offset at word `i`, in words. */
function offsetAt(data: string, words: number, i: number): number {
  const bytes = smallAt(data, words, i);
  if (bytes % 32 !== 0) throw new LensDecodingError('unaligned offset');
  return bytes / 32;
}

function addressAt(data: string, words: number, i: number): Address {
  const w = wordAt(data, words, i);
  if (!w.startsWith('000000000000000000000000')) throw new LensDecodingError('address word has high bits set');
  const lower = w.slice(24);
  let a = checksummed.get(lower);
  if (a === undefined) {
    a = checksumAddress(`0x${lower}`);
    if (checksummed.size >= 1024) checksummed.clear();
    checksummed.set(lower, a);
  }
  return a;
}

/** Decodes the answer of `getAccount`; throws LensDecodingError on anything malformed. */
export function decodeAccount(data: string): LensAccount {
  if (!data.startsWith('0x') || (data.length - 2) % WORD !== 0) throw new LensDecodingError('answer is not whole 32-byte words');
  const n = (data.length - 2) / WORD;
  // The single return value is a dynamic tuple: word 0 points to it; its dynamic members point
  // relative to the tuple's start.
  const t = offsetAt(data, n, 0);
  const s = t + offsetAt(data, n, t + 3);
  const c = t + offsetAt(data, n, t + 4);
  const stockCount = smallAt(data, n, s);
  const cashCount = smallAt(data, n, c);
  const stocks: LensStockAccount[] = new Array(stockCount);
  for (let k = 0; k < stockCount; k++) {
    const b = s + 1 + k * 5;
    stocks[k] = {
      stock: addressAt(data, n, b),
      wallet: uintAt(data, n, b + 1),
      exchange: uintAt(data, n, b + 2),
      locked: uintAt(data, n, b + 3),
      allowance: uintAt(data, n, b + 4),
    };
  }
  const cashTokens: LensCashTokenAccount[] = new Array(cashCount);
  for (let k = 0; k < cashCount; k++) {
    const b = c + 1 + k * 3;
    cashTokens[k] = { token: addressAt(data, n, b), wallet: uintAt(data, n, b + 1), allowance: uintAt(data, n, b + 2) };
  }
  return { blockNumber: uintAt(data, n, t), freeMusd: uintAt(data, n, t + 1), lockedMusd: uintAt(data, n, t + 2), stocks, cashTokens };
}
