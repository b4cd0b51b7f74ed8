/**
 * The signature recovery pool answers exactly what the calling thread's recoverSigner answers (the
 * same signers, the same refusals with the same errors), loses no request when a worker dies, and
 * its worker entry runs both from the sources (tsx) and from the bundle in dist/app.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { bytesToHex, type Address, type Hex } from 'viem';
import { parseSignatureWorkers } from '../config/app-config.ts';
import { AppError, ValidationError } from '../errors/app-error.ts';
import { configureSignatureRecovery, SignatureRecoveryPool, signatureWorkerCount } from './signature-recovery-pool.ts';
import { recoverSigner } from './signature-recovery.ts';
import { RECOVERY_WORKER_MARK, type RecoveryWorkerReply } from './signature-recovery-worker.ts';
import { recoverDigestSigner } from './typed-data.ts';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const word = (x: bigint) => x.toString(16).padStart(64, '0');
const byte = (x: number) => x.toString(16).padStart(2, '0');

const native = createRequire(import.meta.url)('secp256k1/bindings') as {
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
};
const keys = Array.from({ length: 8 }, () => randomBytes(32));

/** A valid signature (v 27/28) of a random digest by one of `keys`. */
function signedCase(k: number): { digest: Hex; signature: Hex; r: bigint; s: bigint; yParity: number } {
  const d = randomBytes(32);
  const { signature, recid } = native.ecdsaSign(d, keys[k % keys.length]);
  const hex = bytesToHex(signature);
  return { digest: bytesToHex(d), signature: `${hex}${byte(27 + recid)}` as Hex, r: BigInt(hex.slice(0, 66)), s: BigInt(`0x${hex.slice(66)}`), yParity: recid };
}

/** Ways to spoil (or keep) a signature or its digest, as a client or a bug might send them. */
const spoilers: Array<(c: ReturnType<typeof signedCase>, x: bigint, bits: number[]) => { digest: Hex; signature: Hex }> = [
  (c) => c,
  (c) => ({ digest: c.digest, signature: `0x${word(c.r)}${word(c.s)}${byte(c.yParity)}` as Hex }),
  (c, x) => ({ digest: c.digest, signature: `0x${word(c.r)}${word(c.s)}${byte(Number(x % 256n))}` as Hex }),
  // the high-s twin (accepted by recoverSigner, as by ecrecover)
  (c) => ({ digest: c.digest, signature: `0x${word(c.r)}${word(N - c.s)}${byte(28 - c.yParity)}` as Hex }),
  // r or s zero, n, above n; a random r (mostly no curve point)
  (c) => ({ digest: c.digest, signature: `0x${word(0n)}${word(c.s)}${byte(27)}` as Hex }),
  (c) => ({ digest: c.digest, signature: `0x${word(c.r)}${word(N)}${byte(27)}` as Hex }),
  (c, x) => ({ digest: c.digest, signature: `0x${word((x % (N - 1n)) + 1n)}${word(c.s)}${byte(27 + c.yParity)}` as Hex }),
  // flipped bits anywhere in the 65 bytes
  (c, _x, bits) => {
    const b = Buffer.from(c.signature.slice(2), 'hex');
    for (const bit of bits) b[bit >> 3] ^= 1 << (bit & 7);
    return { digest: c.digest, signature: `0x${b.toString('hex')}` as Hex };
  },
  // compact form, truncated, extended, upper case, not hex
  (c) => ({ digest: c.digest, signature: `0x${word(c.r)}${word((BigInt(c.yParity) << 255n) | c.s)}` as Hex }),
  (c) => ({ digest: c.digest, signature: c.signature.slice(0, 100) as Hex }),
  (c) => ({ digest: c.digest, signature: `${c.signature}00` as Hex }),
  (c) => ({ digest: c.digest, signature: `0x${c.signature.slice(2).toUpperCase()}` as Hex }),
  (c) => ({ digest: c.digest, signature: `0x${'zz'.repeat(65)}` as Hex }),
  // malformed digests
  (c) => ({ digest: c.digest.slice(0, 64) as Hex, signature: c.signature }),
  (c) => ({ digest: `${c.digest}00` as Hex, signature: c.signature }),
  (c) => ({ digest: c.digest.slice(2) as Hex, signature: c.signature }),
  // not strings at all
  (c) => ({ digest: c.digest, signature: 12 as unknown as Hex }),
  (c) => ({ digest: undefined as unknown as Hex, signature: c.signature }),
];

type Outcome = { ok: Address } | { refused: { name: string; code: string; message: string } };

async function outcome(f: () => Address | Promise<Address>): Promise<Outcome> {
  try {
    return { ok: await f() };
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    return { refused: { name: err.name, code: err.code, message: err.message } };
  }
}

const cases = fc.sample(
  fc.tuple(fc.nat({ max: 7 }), fc.nat({ max: spoilers.length - 1 }), fc.bigInt({ min: 1n, max: N - 1n }), fc.array(fc.nat({ max: 65 * 8 - 1 }), { minLength: 1, maxLength: 3 })),
  { numRuns: 800, seed: 40 },
).map(([k, spoil, x, bits]) => spoilers[spoil](signedCase(k), x, bits));

const pools: SignatureRecoveryPool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
  await configureSignatureRecovery({ workers: 0 });
});

async function readyPool(workers: number): Promise<SignatureRecoveryPool> {
  const pool = new SignatureRecoveryPool({ workers });
  pools.push(pool);
  await pool.whenReady();
  return pool;
}

describe('signature recovery pool', () => {
  it('answers what recoverSigner answers, signers and refusals, in one batch and one at a time', async () => {
    const pool = await readyPool(2);
    const inline = await Promise.all(cases.map((c) => outcome(() => recoverSigner(c.digest, c.signature))));
    // Both sides of the property are exercised.
    expect(inline.filter((o) => 'ok' in o).length).toBeGreaterThan(150);
    expect(inline.filter((o) => 'refused' in o).length).toBeGreaterThan(150);
    expect(new Set(inline.flatMap((o) => ('refused' in o ? [o.refused.message] : [])))).toEqual(
      new Set(['signature: is not a valid signature', 'digest: must be 0x and 32 bytes in hex']),
    );
    // All at once: the turn's requests go as batches to both workers.
    const together = await Promise.all(cases.map((c) => outcome(() => pool.recover(c.digest, c.signature))));
    expect(together).toEqual(inline);
    const afterBatch = pool.stats();
    expect(afterBatch.recoveredInline).toBe(0);
    expect(afterBatch.batches).toBeGreaterThanOrEqual(2);
    // One at a time: batches of one.
    const alone: Outcome[] = [];
    for (const c of cases.slice(0, 100)) alone.push(await outcome(() => pool.recover(c.digest, c.signature)));
    expect(alone).toEqual(inline.slice(0, 100));
    // Only the well-formed inputs reached a worker; the malformed were refused before queueing.
    const wellFormed = (c: { digest: Hex; signature: Hex }) =>
      /^0x[0-9a-fA-F]{64}$/.test(String(c.digest)) && /^0x[0-9a-fA-F]{128}(1b|1c|00|01)$/i.test(String(c.signature));
    expect(pool.stats().recoveredByWorkers).toBe(cases.filter(wellFormed).length + cases.slice(0, 100).filter(wellFormed).length);
  }, 120_000);

  it('recovers on the calling thread, with the same answers, before its workers are ready', async () => {
    const pool = new SignatureRecoveryPool({ workers: 1 });
    pools.push(pool);
    const some = cases.slice(0, 50);
    const got = await Promise.all(some.map((c) => outcome(() => pool.recover(c.digest, c.signature))));
    expect(got).toEqual(await Promise.all(some.map((c) => outcome(() => recoverSigner(c.digest, c.signature)))));
    expect(pool.stats().readyWorkers).toBe(0);
    expect(pool.stats().recoveredByWorkers).toBe(0);
  }, 60_000);

  it('loses no request when a worker dies with a batch: the batch is recovered here and the worker started again', async () => {
    const pool = await readyPool(1);
    const many = Array.from({ length: 4_000 }, (_, i) => signedCase(i));
    const answers = Promise.all(many.map((c) => pool.recover(c.digest, c.signature)));
    // The batch leaves at the end of this turn; kill the worker while it is out.
    while (!pool.busyForTest(0)) await new Promise((r) => setImmediate(r));
    await pool.workerForTest(0)!.terminate();
    expect(await answers).toEqual(many.map((c) => recoverSigner(c.digest, c.signature)));
    const s = pool.stats();
    expect(s.failedOver).toBe(4_000);
    expect(s.recoveredInline).toBe(4_000);
    expect(s.workerExits).toBe(1);
    // Started again: the next batch is a worker's.
    await pool.whenReady();
    const next = signedCase(3);
    expect(await pool.recover(next.digest, next.signature)).toBe(recoverSigner(next.digest, next.signature));
    expect(pool.stats().recoveredByWorkers).toBe(1);
  }, 120_000);

  it('recovers what is queued when it is closed', async () => {
    const pool = await readyPool(1);
    const some = Array.from({ length: 20 }, (_, i) => signedCase(i));
    const answers = Promise.all(some.map((c) => pool.recover(c.digest, c.signature)));
    await pool.close();
    expect(await answers).toEqual(some.map((c) => recoverSigner(c.digest, c.signature)));
  }, 60_000);

  it('serves recoverDigestSigner (signed orders, keys, One Click) once configured, with the same answers', async () => {
    const sigs = cases.slice(0, 200);
    const before = await Promise.all(sigs.map((c) => outcome(() => recoverDigestSigner(c.digest, c.signature))));
    const pool = (await configureSignatureRecovery({ workers: 1 }))!;
    await pool.whenReady();
    const after = await Promise.all(sigs.map((c) => outcome(() => recoverDigestSigner(c.digest, c.signature))));
    expect(after).toEqual(before);
    expect(pool.stats().recoveredByWorkers).toBeGreaterThan(0);
    await configureSignatureRecovery({ workers: 0 });
  }, 60_000);

  it('runs its worker entry from the bundle in dist/app', async () => {
    const { appBuildIsFresh, buildApp } = (await import('../../scripts/build-app.mjs')) as { appBuildIsFresh(): boolean; buildApp(log?: (l: string) => void): Promise<string> };
    if (!appBuildIsFresh()) await buildApp(() => {});
    const script = new URL('../../dist/app/signature-recovery-worker.js', import.meta.url);
    expect(fs.existsSync(script)).toBe(true);
    const w = new Worker(script, { workerData: RECOVERY_WORKER_MARK });
    try {
      const some = [signedCase(1), signedCase(2), { digest: signedCase(3).digest, signature: `0x${word(0n)}${word(1n)}1b` as Hex }];
      const reply = await new Promise<RecoveryWorkerReply>((resolve, reject) => {
        w.on('error', reject);
        w.on('message', (m: RecoveryWorkerReply) => {
          if (m.type === 'ready') w.postMessage({ id: 7, digests: some.map((c) => c.digest).join(''), signatures: some.map((c) => c.signature).join('') });
          else resolve(m);
        });
      });
      expect(reply).toEqual({
        type: 'recovered',
        id: 7,
        signers: `${recoverSigner(some[0].digest, some[0].signature)}${recoverSigner(some[1].digest, some[1].signature)}${'-'.repeat(42)}`,
      });
    } finally {
      await w.terminate();
    }
  }, 120_000);

  it('sizes the pool from SIGNATURE_WORKERS and the cores this process may use', () => {
    expect(parseSignatureWorkers(undefined)).toBe(0);
    expect(parseSignatureWorkers('')).toBe(0);
    expect(parseSignatureWorkers(' AUTO ')).toBe('auto');
    expect(parseSignatureWorkers('0')).toBe(0);
    expect(parseSignatureWorkers('3')).toBe(3);
    for (const bad of ['-1', 'two', '1.5', '257']) expect(() => parseSignatureWorkers(bad)).toThrow(AppError);
    expect(signatureWorkerCount('auto', 1)).toBe(0);
    expect(signatureWorkerCount('auto', 2)).toBe(1);
    expect(signatureWorkerCount('auto', 4)).toBe(3);
    expect(signatureWorkerCount('auto', 8)).toBe(4);
    expect(signatureWorkerCount('auto', 64)).toBe(4);
    expect(signatureWorkerCount(5, 2)).toBe(5);
  });
});
