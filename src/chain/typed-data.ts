/**
 * EIP-712 typed data for every wallet-signed flow: One Click delegation, perpetual API-key
 * creation, One-Click Trade and perpetual orders. A flow defines its message type once
 * ({@link defineTypedData}); the module then answers the complete typed data a wallet signs (what
 * a prepare/build call returns), reads the message a client sends back, hashes it and recovers or
 * verifies its signer — the digest viem's `hashTypedData` and a contract's `_hashTypedDataV4`
 * compute (typed-data.test.ts holds them equal), and the signer with libsecp256k1
 * (signature-recovery.ts, viem's `recoverAddress` when the native binding is missing: the same
 * answers, ~30× the CPU), on a worker thread of the recovery pool when SIGNATURE_WORKERS starts one
 * (signature-recovery-pool.ts, the same answers again).
 *
 * The server rebuilds domain and types itself; only the message comes from the client, and every
 * field of it is checked here (a `ValidationError` names the field). Signatures are read once, by
 * {@link parseSignature}: the compact form of EIP-2098 is accepted wherever the 65-byte one is, and a
 * high `s` is refused everywhere (EIP-2). Nothing here logs, and no error carries a signature.
 */
import { isHex, type Address, type Hex } from 'viem';
import { checksumAddress, isAddressText } from './address-checksum.ts';
import { ValidationError } from '../errors/app-error.ts';
import { keccak256Bytes, keccak256Hex, keccak256Utf8 } from './keccak.ts';
import { nativeRecovery, recoverSigner as recoverNative, recoverSignerJs } from './signature-recovery.ts';
import { signatureRecoveryPool } from './signature-recovery-pool.ts';

export interface TypedField {
  name: string;
  type: string;
}

export type TypedFields = readonly TypedField[];

export interface TypedDataDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Address;
}

export const EIP712_DOMAIN_FIELDS: TypedFields = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
];

/** A field value as a JSON answer carries it (integers over 32 bits as decimal strings). */
export type JsonValue = string | number | boolean | { [field: string]: JsonValue };

/** Complete typed data, as `eth_signTypedData_v4` takes it and a prepare call answers it. */
export interface CompleteTypedData<P extends string = string> {
  domain: TypedDataDomain;
  types: Record<string, TypedFields>;
  primaryType: P;
  message: Record<string, JsonValue>;
}

/** A message with its values typed for hashing: bigint integers, checksummed addresses. */
export type TypedMessage = Record<string, unknown>;

/** The domain of one verifying contract on one chain; throws on a malformed chain id or address. */
export function typedDataDomain(d: { name: string; version: string; chainId: number; verifyingContract: string }): TypedDataDomain {
  if (!Number.isSafeInteger(d.chainId) || d.chainId <= 0) throw new ValidationError('domain.chainId', 'must be a positive integer');
  if (!isAddressText(d.verifyingContract)) throw new ValidationError('domain.verifyingContract', 'is not an address');
  return { name: d.name, version: d.version, chainId: d.chainId, verifyingContract: checksumAddress(d.verifyingContract) };
}

const SIGNATURE_RE = /^0x(?:[0-9a-fA-F]{130}|[0-9a-fA-F]{128})$/;

/** The order of secp256k1's group. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
/** The largest `s` Ethereum accepts (EIP-2), as OpenZeppelin's ECDSA and `ecrecover` users check it. */
const SECP256K1_HALF_N = SECP256K1_N / 2n;
const Y_PARITY_BIT = 1n << 255n;

/**
 * The address whose key signed the EIP-712 `digest`; ValidationError on a malformed or non-canonical
 * signature (see {@link parseSignature}), and never viem's error, which would quote the signature.
 */
export async function recoverDigestSigner(digest: Hex, signature: unknown): Promise<Address> {
  const sig = parseSignature(signature);
  try {
    // parseSignature's canonical 65 bytes (low s, v 27/28) are within what both recoveries accept,
    // so what is refused is a digest that is not 32 bytes or an r with no curve point.
    // With SIGNATURE_WORKERS the recovery runs on a worker thread (signature-recovery-pool.ts, the
    // same answers); without, on this thread as before.
    const pool = signatureRecoveryPool();
    if (pool) return await pool.recover(digest, sig);
    return nativeRecovery ? recoverNative(digest, sig) : await recoverSignerJs(digest, sig);
  } catch {
    throw new ValidationError('signature', 'is not a valid signature');
  }
}

/**
 * Reads a signature: 65 bytes (r ‖ s ‖ v, v 27 or 28, or 0 or 1 as some wallets write it) or 64
 * bytes (EIP-2098 compact: r ‖ yParity·2²⁵⁵ + s), in hex. Answers it as the 65 bytes a contract's
 * `ECDSA.recover` takes (OpenZeppelin 5 refuses the compact form and v 0/1), lower case, v 27 or 28.
 *
 * A high `s` (above secp256k1n/2) is refused, as Ethereum refuses it since EIP-2: (r, n−s) with the
 * other v is a second valid signature of the same key over the same message, so accepting both would
 * let anyone who saw a signature make another one that contracts refuse.
 */
export function parseSignature(raw: unknown, field = 'signature'): Hex {
  if (typeof raw !== 'string' || !SIGNATURE_RE.test(raw)) {
    throw new ValidationError(field, 'must be 0x and a 65-byte signature (or a 64-byte EIP-2098 compact one) in hex');
  }
  const hex = raw.toLowerCase();
  const r = BigInt(`0x${hex.slice(2, 66)}`);
  let s = BigInt(`0x${hex.slice(66, 130)}`);
  let yParity: number;
  if (hex.length === 130) {
    // Compact: the top bit of the second word is the y parity, the rest is s.
    yParity = s & Y_PARITY_BIT ? 1 : 0;
    s &= Y_PARITY_BIT - 1n;
  } else {
    const v = parseInt(hex.slice(130), 16);
    if (v === 27 || v === 28) yParity = v - 27;
    else if (v === 0 || v === 1) yParity = v;
    else throw new ValidationError(field, 'is not a valid signature (v must be 27 or 28)');
  }
  if (r === 0n || r >= SECP256K1_N || s === 0n || s >= SECP256K1_N) throw new ValidationError(field, 'is not a valid signature');
  if (s > SECP256K1_HALF_N) {
    throw new ValidationError(field, 'has a high s value (above secp256k1n/2), which Ethereum refuses (EIP-2): send the low-s form (r, n - s, the other v)');
  }
  return `0x${hex.slice(2, 66)}${s.toString(16).padStart(64, '0')}${(27 + yParity).toString(16)}` as Hex;
}

/**
 * A deadline in seconds since the epoch is expired once `nowSeconds` is past it — the contracts'
 * `block.timestamp > deadline`.
 */
export function assertNotExpired(deadline: bigint | number, nowSeconds: number, field = 'message.deadline'): void {
  if (BigInt(deadline) < BigInt(Math.floor(nowSeconds))) throw new ValidationError(field, 'has expired');
}

type Atomic =
  | { kind: 'address' }
  | { kind: 'bool' }
  | { kind: 'string' }
  | { kind: 'bytes'; size?: number }
  | { kind: 'int'; signed: boolean; bits: number };

function atomic(type: string): Atomic | undefined {
  if (type === 'address' || type === 'bool' || type === 'string') return { kind: type };
  if (type === 'bytes') return { kind: 'bytes' };
  const b = /^bytes([1-9]|[12]\d|3[0-2])$/.exec(type);
  if (b) return { kind: 'bytes', size: Number(b[1]) };
  const i = /^(u?)int(\d+)$/.exec(type);
  if (i) {
    const bits = Number(i[2]);
    if (bits >= 8 && bits <= 256 && bits % 8 === 0) return { kind: 'int', signed: i[1] === '', bits };
  }
  return undefined;
}

const fieldName = (parent: string, name: string | undefined): string => (name === undefined ? parent : `${parent}.${name}`);

/**
 * A field's value read as its atomic type (checked, normalised), or the ValidationError naming the
 * field: `parent`, or `parent.name` when a name is given (built only for the error: a signed order's
 * fields are read on every order).
 */
function readAtomic(t: Atomic, raw: unknown, parent: string, name?: string): unknown {
  switch (t.kind) {
    case 'address':
      if (!isAddressText(raw)) throw new ValidationError(fieldName(parent, name), 'must be an address');
      return checksumAddress(raw);
    case 'bool':
      if (typeof raw !== 'boolean') throw new ValidationError(fieldName(parent, name), 'must be true or false');
      return raw;
    case 'string':
      if (typeof raw !== 'string') throw new ValidationError(fieldName(parent, name), 'must be a string');
      return raw;
    case 'bytes': {
      if (typeof raw !== 'string' || !isHex(raw, { strict: true }) || raw.length % 2 !== 0) throw new ValidationError(fieldName(parent, name), 'must be 0x and hex bytes');
      if (t.size !== undefined && raw.length !== 2 + 2 * t.size) throw new ValidationError(fieldName(parent, name), `must be ${t.size} bytes`);
      return raw.toLowerCase();
    }
    case 'int': {
      let v: bigint;
      if (typeof raw === 'string' && (t.signed ? /^-?(0|[1-9]\d*)$/ : /^(0|[1-9]\d*)$/).test(raw) && raw.length <= 80) v = BigInt(raw);
      else if (typeof raw === 'number' && Number.isSafeInteger(raw)) v = BigInt(raw);
      else if (typeof raw === 'bigint') v = raw;
      else throw new ValidationError(fieldName(parent, name), 'must be an integer (a decimal string)');
      const max = t.signed ? (1n << BigInt(t.bits - 1)) - 1n : (1n << BigInt(t.bits)) - 1n;
      const min = t.signed ? -(1n << BigInt(t.bits - 1)) : 0n;
      if (v < min || v > max) throw new ValidationError(fieldName(parent, name), `is out of range for ${t.signed ? '' : 'u'}int${t.bits}`);
      return v;
    }
  }
}

function writeAtomic(t: Atomic, v: unknown): JsonValue {
  // Integers a JSON number carries exactly stay numbers (a uint32 deadline); wider ones are
  // decimal strings, which eth_signTypedData_v4 accepts as well.
  if (t.kind === 'int') return t.bits <= 32 ? Number(v as bigint) : (v as bigint).toString();
  return v as JsonValue;
}

/**
 * The EIP-712 word of a `string` value (its keccak256) for strings seen before: an order's symbol,
 * side, type, time in force and most sizes and prices repeat from one order to the next. Short
 * strings only, and cleared when full, so a stream of distinct strings costs what no cache would.
 */
const stringWords = new Map<string, Uint8Array>();
const STRING_WORDS_MAX = 4_096;
const STRING_WORD_MAX_LENGTH = 64;

function stringWord(s: string): Uint8Array {
  let w = stringWords.get(s);
  if (w === undefined) {
    w = keccak256Utf8(s);
    if (s.length <= STRING_WORD_MAX_LENGTH) {
      if (stringWords.size >= STRING_WORDS_MAX) stringWords.clear();
      stringWords.set(s, w);
    }
  }
  return w;
}

const TWO_256 = 1n << 256n;

/**
 * EIP-712 `hashStruct` for a fixed set of struct types (no arrays: the types here have none): the
 * type hashes computed once, each value encoded as its 32-byte word (strings and dynamic bytes by
 * their keccak256, nested structs by their own hashStruct), as the specification and OpenZeppelin's
 * `_hashTypedDataV4` do. Values are those parseMessage answers (bigint integers, checksummed
 * addresses, lower-case hex bytes). The words are written into one buffer and hashed in
 * WebAssembly (keccak.ts).
 */
function createStructHasher(types: Record<string, TypedFields>) {
  const deps = (type: string, found: Set<string>): Set<string> => {
    if (found.has(type) || !types[type]) return found;
    found.add(type);
    for (const f of types[type]) deps(f.type, found);
    return found;
  };
  const encodeType = (type: string): string => {
    const [, ...rest] = [...deps(type, new Set())];
    return [type, ...rest.sort()].map((t) => `${t}(${types[t].map((f) => `${f.type} ${f.name}`).join(',')})`).join('');
  };
  const typeHashes = new Map(Object.keys(types).map((t) => [t, keccak256Utf8(encodeType(t))]));
  const atomics = new Map<string, Atomic | undefined>();
  const atomicOf = (type: string): Atomic | undefined => {
    if (!atomics.has(type)) atomics.set(type, atomic(type));
    return atomics.get(type);
  };

  /** Writes the 32-byte word of `v` at `at` in `out`. */
  const word = (out: Buffer, at: number, type: string, v: unknown): void => {
    const a = atomicOf(type);
    if (!a) {
      out.set(hashStructBytes(type, v as Record<string, unknown>), at);
      return;
    }
    switch (a.kind) {
      case 'address':
        out.fill(0, at, at + 12);
        out.write((v as string).slice(2), at + 12, 20, 'hex');
        return;
      case 'bool':
        out.fill(0, at, at + 32);
        if (v) out[at + 31] = 1;
        return;
      case 'string':
        out.set(stringWord(v as string), at);
        return;
      case 'bytes':
        if (a.size === undefined) {
          out.set(keccak256Bytes(Buffer.from((v as string).slice(2), 'hex')), at);
        } else {
          out.fill(0, at, at + 32);
          out.write((v as string).slice(2), at, a.size, 'hex');
        }
        return;
      case 'int': {
        // The domain's chainId is a number; message integers are bigints.
        const n = BigInt(v as bigint | number);
        out.write((n < 0n ? TWO_256 + n : n).toString(16).padStart(64, '0'), at, 32, 'hex');
        return;
      }
    }
  };

  function hashStructBytes(type: string, value: Record<string, unknown>): Uint8Array {
    const fields = types[type];
    const data = Buffer.allocUnsafe(32 * (1 + fields.length));
    data.set(typeHashes.get(type)!, 0);
    for (let i = 0; i < fields.length; i++) word(data, 32 * (i + 1), fields[i].type, value[fields[i].name]);
    return keccak256Bytes(data);
  }

  return { hashStructBytes, encodeType };
}

export interface TypedDataKind<P extends string = string> {
  readonly primaryType: P;
  /** The message types (without `EIP712Domain`). */
  readonly types: Readonly<Record<string, TypedFields>>;
  /**
   * Reads a message as a client sends it (JSON values: integers as decimal strings or numbers):
   * every field present, of its type and range, and nothing else. `field` prefixes the names in
   * the errors (`message.nonce: …`).
   */
  parseMessage(raw: unknown, field?: string): TypedMessage;
  /** The complete typed data a wallet signs, JSON-safe, `types` with `EIP712Domain`. */
  build(domain: TypedDataDomain, message: TypedMessage | Record<string, unknown>): CompleteTypedData<P>;
  /** The EIP-712 digest (`\x19\x01 ‖ domainSeparator ‖ hashStruct(message)`). */
  hash(domain: TypedDataDomain, message: TypedMessage | Record<string, unknown>): Hex;
  /**
   * The address whose key signed the message; ValidationError on a malformed signature. `digest`,
   * when the caller has it from `hash`, spares hashing the message again.
   */
  recoverSigner(domain: TypedDataDomain, message: TypedMessage | Record<string, unknown>, signature: unknown, digest?: Hex): Promise<Address>;
  /**
   * Checks that `expected` signed the message; ValidationError naming `signature` when another
   * key did (the reason names `expectedField`, the message field the signer must match).
   */
  verifySigner(
    domain: TypedDataDomain,
    message: TypedMessage | Record<string, unknown>,
    signature: unknown,
    expected: Address,
    expectedField?: string,
  ): Promise<void>;
}

/**
 * One signed message type of one flow, e.g.
 * `defineTypedData({ primaryType: 'Delegate', types: { Delegate: [{ name: 'user', type: 'address' }, …] } })`.
 * Field types: address, bool, string, bytes, bytes1..32, (u)int8..256, and the other struct types
 * of `types` (no arrays: none of the flows needs them). Throws at definition on anything else.
 */
export function defineTypedData<P extends string>(spec: { primaryType: P; types: Record<string, TypedFields> }): TypedDataKind<P> {
  const { primaryType } = spec;
  if ('EIP712Domain' in spec.types) throw new Error('typed data: EIP712Domain is built from the domain; leave it out');
  if (!spec.types[primaryType]) throw new Error(`typed data: no type ${primaryType}`);
  for (const [name, fields] of Object.entries(spec.types)) {
    const seen = new Set<string>();
    for (const f of fields) {
      if (seen.has(f.name)) throw new Error(`typed data: ${name}.${f.name} twice`);
      seen.add(f.name);
      if (!atomic(f.type) && !spec.types[f.type]) throw new Error(`typed data: ${name}.${f.name} has unsupported type ${f.type}`);
    }
  }
  const types: Record<string, TypedFields> = Object.freeze({ ...spec.types });
  const allTypes: Record<string, TypedFields> = { EIP712Domain: EIP712_DOMAIN_FIELDS, ...types };

  // Each type's fields with their atomic kinds, resolved once: reading a message (a signed order's
  // thirteen fields, twice an order before this) resolved every field's type by regular expression
  // and built every field's error name, thrown or not.
  const layouts = new Map(
    Object.entries(types).map(([name, fields]) => [name, { names: new Set(fields.map((f) => f.name)), fields: fields.map((f) => ({ name: f.name, type: f.type, atomic: atomic(f.type) })) }]),
  );
  const read = (type: string, raw: unknown, field: string, depth: number): unknown => {
    const a = atomic(type);
    if (a) return readAtomic(a, raw, field);
    return readStruct(type, raw, field, depth);
  };
  const readStruct = (type: string, raw: unknown, field: string, depth: number): Record<string, unknown> => {
    if (depth > 8) throw new ValidationError(field, 'is nested too deeply');
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ValidationError(field, `must be an object (${type})`);
    const layout = layouts.get(type)!;
    const obj = raw as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      if (!layout.names.has(key)) throw new ValidationError(`${field}.${key}`, `is not a field of ${type}`);
    }
    const out: Record<string, unknown> = {};
    for (const f of layout.fields) {
      const v = obj[f.name];
      if (v === undefined || v === null || !Object.prototype.hasOwnProperty.call(obj, f.name)) {
        throw new ValidationError(`${field}.${f.name}`, 'is required');
      }
      out[f.name] = f.atomic ? readAtomic(f.atomic, v, field, f.name) : readStruct(f.type, v, `${field}.${f.name}`, depth + 1);
    }
    return out;
  };

  const write = (type: string, v: unknown): JsonValue => {
    const a = atomic(type);
    if (a) return writeAtomic(a, v);
    const obj = v as Record<string, unknown>;
    const out: Record<string, JsonValue> = {};
    for (const f of types[type]) out[f.name] = write(f.type, obj[f.name]);
    return out;
  };

  // Messages this kind answered from parseMessage: the digest takes them as they are instead of
  // reading them again. Held weakly, so a message is forgotten with its last reference.
  const parsed = new WeakSet<object>();
  const parseMessage = (raw: unknown, field = 'message'): TypedMessage => {
    const m = read(primaryType, raw, field, 0) as TypedMessage;
    parsed.add(m);
    return m;
  };

  const hasher = createStructHasher(allTypes);
  const separators = new Map<string, Uint8Array>();
  const domainSeparator = (domain: TypedDataDomain): Uint8Array => {
    const key = `${domain.name}\n${domain.version}\n${domain.chainId}\n${domain.verifyingContract}`;
    let sep = separators.get(key);
    if (sep === undefined) {
      sep = hasher.hashStructBytes('EIP712Domain', domain as unknown as Record<string, unknown>);
      // A service has a domain or two; the bound only guards against a caller making many.
      if (separators.size > 64) separators.clear();
      separators.set(key, sep);
    }
    return sep;
  };
  // The EIP-712 digest computed here rather than by viem's hashTypedData, which validates the
  // types and re-derives every type string on each call: ~4x the cost of the native recovery after
  // it on the signed-order path. The message is read (checked) once by parseMessage; the property
  // test in typed-data.test.ts holds this equal to hashTypedData.
  const hash = (domain: TypedDataDomain, message: Record<string, unknown>): Hex => {
    const data = Buffer.allocUnsafe(66);
    data[0] = 0x19;
    data[1] = 0x01;
    data.set(domainSeparator(domain), 2);
    data.set(hasher.hashStructBytes(primaryType, parsed.has(message) ? message : parseMessage(message)), 34);
    return keccak256Hex(data);
  };

  // The digest once, then the key: a caller that needs the digest too (an order's id) passes it in.
  const recoverSigner = async (domain: TypedDataDomain, message: Record<string, unknown>, signature: unknown, digest?: Hex): Promise<Address> =>
    recoverDigestSigner(digest ?? hash(domain, message), signature);

  return {
    primaryType,
    types,
    parseMessage,
    build(domain, message) {
      return {
        domain: { ...domain },
        types: allTypes,
        primaryType,
        message: write(primaryType, parseMessage(message)) as Record<string, JsonValue>,
      };
    },
    hash,
    recoverSigner,
    async verifySigner(domain, message, signature, expected, expectedField = 'the expected signer') {
      const signer = await recoverSigner(domain, message, signature);
      if (signer.toLowerCase() !== expected.toLowerCase()) {
        throw new ValidationError('signature', `is not signed by ${expectedField}`);
      }
    },
  };
}
