/**
 * A worker thread of the signature recovery pool (signature-recovery-pool.ts): answers each batch of
 * (digest, signature) pairs with their signers, recovered by the same `recoverSigner` the calling
 * thread would run (libsecp256k1), so that an answer never depends on where it was computed.
 *
 * A batch travels as two strings of fixed-width hex (66 characters a digest, 132 a signature): one
 * structured clone of a string costs far less than an array of objects, and the inputs were checked
 * on the calling thread already. The answer is one string of 42-character addresses, a refusal
 * written as 42 dashes (the calling thread turns it into the same ValidationError recoverSigner throws).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Hex } from 'viem';
import { nativeRecovery, recoverSigner } from './signature-recovery.ts';

export interface RecoveryBatchRequest {
  id: number;
  /** `n` digests, each `0x` and 64 hex characters, end to end. */
  digests: string;
  /** `n` signatures, each `0x` and 130 hex characters, end to end. */
  signatures: string;
}

export type RecoveryWorkerReply = { type: 'ready' } | { type: 'recovered'; id: number; signers: string };

export const DIGEST_CHARS = 66;
export const SIGNATURE_CHARS = 132;
export const ADDRESS_CHARS = 42;
export const REFUSED = '-'.repeat(ADDRESS_CHARS);

/** The answer to one batch (exported for the pool's inline path and the tests). */
export function recoverBatch(digests: string, signatures: string): string {
  const n = digests.length / DIGEST_CHARS;
  let out = '';
  for (let i = 0; i < n; i++) {
    const digest = digests.slice(i * DIGEST_CHARS, (i + 1) * DIGEST_CHARS) as Hex;
    const signature = signatures.slice(i * SIGNATURE_CHARS, (i + 1) * SIGNATURE_CHARS) as Hex;
    try {
      out += recoverSigner(digest, signature);
    } catch {
      out += REFUSED;
    }
  }
  return out;
}

/** The pool's workers are started with this as their workerData. */
export const RECOVERY_WORKER_MARK = 'tokex-signature-recovery';

// Only in a thread the pool started: the pool imports this module's constants, and another kind of
// worker (the perp projector's) may load the pool through typed-data.ts.
if (parentPort && workerData === RECOVERY_WORKER_MARK) {
  const port = parentPort;
  // Without the binding every answer would be a refusal: exit instead, and the pool recovers on the
  // calling thread (through viem there, as the service does without the binding).
  if (!nativeRecovery) process.exit(3);
  port.on('message', (m: RecoveryBatchRequest) => {
    port.postMessage({ type: 'recovered', id: m.id, signers: recoverBatch(m.digests, m.signatures) } satisfies RecoveryWorkerReply);
  });
  port.postMessage({ type: 'ready' } satisfies RecoveryWorkerReply);
}
