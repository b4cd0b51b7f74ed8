import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesToHex, recoverAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount, sign } from 'viem/accounts';
import { ValidationError } from '../errors/app-error.ts';
import { nativeRecovery, recoverSigner, recoverSignerAsync, recoverSignerJs } from './signature-recovery.ts';
import { parseSignature, recoverDigestSigner } from './typed-data.ts';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const word = (x: bigint) => x.toString(16).padStart(64, '0');
const byte = (x: number) => x.toString(16).padStart(2, '0');

type Outcome = { ok: Address } | { refused: string };

async function outcome(f: () => Address | Promise<Address>): Promise<Outcome> {
  try {
    return { ok: await f() };
  } catch (err) {
    return { refused: err instanceof ValidationError ? err.message : 'error' };
  }
}

/** viem alone, as typed-data.ts recovered before: any throw is a refusal. */
const viemOutcome = (digest: Hex, signature: Hex) => outcome(() => recoverAddress({ hash: digest, signature }));
/** What recoverDigestSigner answered before this module: parseSignature, then viem. */
async function previousDigestSigner(digest: Hex, signature: unknown): Promise<Address> {
  const sig = parseSignature(signature);
  try {
    return await recoverAddress({ hash: digest, signature: sig });
  } catch {
    throw new ValidationError('signature', 'is not a valid signature');
  }
}

const privateKey = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .map((b) => bytesToHex(b))
  .filter((k) => BigInt(k) > 0n && BigInt(k) < N);
/** Random digests, with the edges (zero, all ones, n and above, which both sides reduce mod n). */
const digest: fc.Arbitrary<Hex> = fc.oneof(
  { weight: 6, arbitrary: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => bytesToHex(b)) },
  { weight: 1, arbitrary: fc.constantFrom<Hex>(`0x${word(0n)}`, `0x${'ff'.repeat(32)}`, `0x${word(N)}`, `0x${word(N - 1n)}`, `0x${word(N + 1n)}`) },
);

/** A valid signature's parts. */
interface Parts {
  r: bigint;
  s: bigint;
  yParity: number;
}
async function signed(key: Hex, hash: Hex): Promise<{ parts: Parts; signature: Hex; signer: Address }> {
  const { r, s, yParity } = await sign({ hash, privateKey: key });
  const parts = { r: BigInt(r), s: BigInt(s), yParity: yParity ?? 0 };
  return { parts, signature: `0x${word(parts.r)}${word(parts.s)}${byte(27 + parts.yParity)}`, signer: privateKeyToAccount(key).address };
}

/**
 * Ways to spoil (or keep) a signature: each answers hex a client could send. Even-length hex only;
 * odd lengths are their own case below.
 */
const mutation: fc.Arbitrary<(p: Parts, sig: Hex) => Hex> = fc.oneof(
  fc.constant((_p: Parts, sig: Hex) => sig),
  // v as 0/1, any other v byte
  fc.constant((p: Parts, _sig: Hex) => `0x${word(p.r)}${word(p.s)}${byte(p.yParity)}` as Hex),
  fc.integer({ min: 0, max: 255 }).map((v) => (p: Parts) => `0x${word(p.r)}${word(p.s)}${byte(v)}` as Hex),
  // the high-s twin, with the right and the wrong v
  fc.boolean().map((flip) => (p: Parts) => `0x${word(p.r)}${word(N - p.s)}${byte(27 + (p.yParity ^ (flip ? 1 : 0)))}` as Hex),
  // r or s zero, n, above n, 2^256 − 1
  fc
    .tuple(fc.boolean(), fc.oneof(fc.constantFrom(0n, N, N + 1n, (1n << 256n) - 1n), fc.bigInt({ min: N, max: (1n << 256n) - 1n })))
    .map(([onR, x]) => (p: Parts) => `0x${onR ? word(x) : word(p.r)}${onR ? word(p.s) : word(x)}${byte(27 + p.yParity)}` as Hex),
  // flipped bits anywhere in the 65 bytes
  fc.array(fc.integer({ min: 0, max: 65 * 8 - 1 }), { minLength: 1, maxLength: 3 }).map((bits) => (_p: Parts, sig: Hex) => {
    const b = Buffer.from(sig.slice(2), 'hex');
    for (const bit of bits) b[bit >> 3] ^= 1 << (bit & 7);
    return `0x${b.toString('hex')}` as Hex;
  }),
  // random r (often no curve point), random s
  fc.tuple(fc.bigInt({ min: 1n, max: N - 1n }), fc.boolean()).map(([x, onR]) => (p: Parts) =>
    `0x${onR ? word(x) : word(p.r)}${onR ? word(p.s) : word(x)}${byte(27 + p.yParity)}` as Hex),
  // random bytes of a random even length, 65 among them
  fc.uint8Array({ minLength: 0, maxLength: 70 }).map((b) => () => bytesToHex(b)),
  fc.uint8Array({ minLength: 65, maxLength: 65 }).map((b) => () => bytesToHex(b)),
  // EIP-2098 compact, truncated, extended
  fc.constant((p: Parts) => `0x${word(p.r)}${word((BigInt(p.yParity) << 255n) | p.s)}` as Hex),
  fc.integer({ min: 1, max: 64 }).map((cut) => (_p: Parts, sig: Hex) => sig.slice(0, 2 + 2 * cut) as Hex),
  fc.uint8Array({ minLength: 1, maxLength: 4 }).map((tail) => (_p: Parts, sig: Hex) => `${sig}${bytesToHex(tail).slice(2)}` as Hex),
  // upper case
  fc.constant((_p: Parts, sig: Hex) => `0x${sig.slice(2).toUpperCase()}` as Hex),
);

describe('native signer recovery', () => {
  it('loads libsecp256k1, not the JS fallback', () => {
    expect(nativeRecovery).toBe(true);
  });

  it("equals viem's recoverAddress for random keys and digests", async () => {
    await fc.assert(
      fc.asyncProperty(privateKey, digest, fc.boolean(), async (key, hash, v01) => {
        const { parts, signature, signer } = await signed(key, hash);
        const sig = v01 ? (`0x${word(parts.r)}${word(parts.s)}${byte(parts.yParity)}` as Hex) : signature;
        expect(recoverSigner(hash, sig)).toBe(signer);
        expect(await recoverAddress({ hash, signature: sig })).toBe(signer);
        expect(await recoverSignerAsync(hash, sig)).toBe(signer);
        expect(await recoverSignerJs(hash, sig)).toBe(signer);
      }),
      { numRuns: 100 },
    );
  });

  it('accepts and refuses what viem does, with the same signer, on spoilt signatures', async () => {
    const seen = { ok: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(privateKey, digest, mutation, async (key, hash, spoil) => {
        const { parts, signature } = await signed(key, hash);
        const sig = spoil(parts, signature);
        const viem = await viemOutcome(hash, sig);
        const native = await outcome(() => recoverSigner(hash, sig));
        const js = await outcome(() => recoverSignerJs(hash, sig));
        if ('ok' in viem) expect(native).toEqual(viem);
        else expect(native).toEqual({ refused: 'signature: is not a valid signature' });
        // The fallback answers exactly as the native path, error included.
        expect(js).toEqual(native);
        seen['ok' in native ? 'ok' : 'refused']++;
      }),
      { numRuns: 400 },
    );
    // Both sides of the property were exercised.
    expect(seen.ok).toBeGreaterThan(60);
    expect(seen.refused).toBeGreaterThan(60);
  });

  it('refuses every odd-length hex (viem pads some of them into a signature)', async () => {
    await fc.assert(
      fc.asyncProperty(privateKey, digest, fc.integer({ min: 0, max: 140 }), async (key, hash, len) => {
        const { signature } = await signed(key, hash);
        const sig = `0x${signature.slice(2).padEnd(142, 'a').slice(0, 2 * len + 1)}` as Hex;
        expect(await outcome(() => recoverSigner(hash, sig))).toEqual({ refused: 'signature: is not a valid signature' });
        expect(await outcome(() => recoverSignerJs(hash, sig))).toEqual({ refused: 'signature: is not a valid signature' });
        // And typed-data's parseSignature refused them before recovery, then as now.
        const before = await outcome(() => previousDigestSigner(hash, sig));
        expect(before).toHaveProperty('refused');
        expect(await outcome(() => recoverDigestSigner(hash, sig))).toEqual(before);
      }),
      { numRuns: 40 },
    );
  });

  it('recoverDigestSigner answers exactly as before (parseSignature, then viem), on every form', async () => {
    await fc.assert(
      fc.asyncProperty(privateKey, digest, mutation, async (key, hash, spoil) => {
        const { parts, signature } = await signed(key, hash);
        const sig = spoil(parts, signature);
        expect(await outcome(() => recoverDigestSigner(hash, sig))).toEqual(await outcome(() => previousDigestSigner(hash, sig)));
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a recovery at the point at infinity, as viem does', async () => {
    // With R = kG, r = x(R) and s = h·k⁻¹: sR − hG = 0, so the recovered key r⁻¹(sR − hG) is infinity.
    const k = 0x1234567890abcdefn;
    const h = 0xabcdef0123456789n;
    const pub = privateKeyToAccount(`0x${word(k)}`).publicKey;
    const r = BigInt(`0x${pub.slice(4, 68)}`);
    const yParity = Number(BigInt(`0x${pub.slice(68)}`) & 1n);
    const inv = (a: bigint) => {
      let [t, nt, x, nx] = [0n, 1n, N, a % N];
      while (nx !== 0n) {
        const q = x / nx;
        [t, nt] = [nt, t - q * nt];
        [x, nx] = [nx, x - q * nx];
      }
      return ((t % N) + N) % N;
    };
    const s = (h * inv(k)) % N;
    const hash = `0x${word(h)}` as Hex;
    const sig = `0x${word(r)}${word(s)}${byte(27 + yParity)}` as Hex;
    expect(await viemOutcome(hash, sig)).toEqual({ refused: 'error' });
    expect(await outcome(() => recoverSigner(hash, sig))).toEqual({ refused: 'signature: is not a valid signature' });
    expect(await outcome(() => recoverSignerJs(hash, sig))).toEqual({ refused: 'signature: is not a valid signature' });
    // The other parity is a real point (−R), and recovers a key.
    const other = `0x${word(r)}${word(s)}${byte(28 - yParity)}` as Hex;
    expect(recoverSigner(hash, other)).toBe(await recoverAddress({ hash, signature: other }));
  });

  it('refuses a digest that is not 32 bytes in hex, and never quotes the signature', async () => {
    const { signature } = await signed(`0x${word(7n)}`, `0x${word(1n)}`);
    for (const bad of ['0x', `0x${word(1n)}00`, `0x${word(1n).slice(1)}`, word(1n), `0x${word(1n).slice(2)}zz`]) {
      expect(() => recoverSigner(bad as Hex, signature)).toThrow('digest: must be 0x and 32 bytes in hex');
    }
    const err = await outcome(() => recoverSigner(`0x${word(1n)}`, `${signature.slice(0, 130)}05` as Hex));
    expect(err).toEqual({ refused: 'signature: is not a valid signature' });
  });
});
