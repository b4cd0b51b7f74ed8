/**
 * The nonce sequence of one sending address, kept locally so that several transactions can be in
 * flight at once without asking the node for a nonce each time (the node's `pending` count lags
 * behind a burst of sends, and two workers reading it at once would get the same number).
 *
 * One manager per address per process: every worker that sends with the key must go through the
 * same manager (src/chain/tx-sender.ts's registry hands them the same sender). Two processes must
 * never send with one key — nothing here could keep their sequences apart (see operator-roles.ts).
 */
import type { Address } from 'viem';
import { createLock } from '../lib/async.ts';

export interface NonceLease {
  /**
   * The nonce to use: the local next one, or the chain's count when none is known. `fresh` asks for
   * the chain's count even when a local one is known (it is kept only if the chain cannot be read).
   */
  next(opts?: { fresh?: boolean }): Promise<number>;
  /** `nonce` reached the node: the sequence continues after it. */
  used(nonce: number): void;
  /** The nonce was not used (or its fate is unclear): the next lease reads it from the chain. */
  forget(): void;
}

export interface NonceManager {
  readonly address: Address;
  /**
   * Runs `fn` holding the address's lock: nothing else takes a nonce of this address until `fn`
   * settles, so transactions reach the node in nonce order. A throwing `fn` forgets the nonce.
   */
  run<T>(fn: (lease: NonceLease) => Promise<T>): Promise<T>;
  /** Forgets the local nonce: the next lease reads it from the chain. Safe at any time. */
  resync(): void;
  /** The next nonce known locally; undefined when the next lease reads it from the chain. */
  peek(): number | undefined;
}

export interface NonceManagerOptions {
  address: Address;
  /** The chain's count for the address including its pool (`eth_getTransactionCount … pending`). */
  readPending: () => Promise<number>;
}

export function createNonceManager(opts: NonceManagerOptions): NonceManager {
  const lock = createLock();
  let nextNonce: number | undefined;

  const lease: NonceLease = {
    async next(o) {
      if (nextNonce === undefined) {
        nextNonce = await opts.readPending();
      } else if (o?.fresh) {
        try {
          nextNonce = await opts.readPending();
        } catch {
          // The node is away: the local count is the best knowledge, and the broadcast will wait.
        }
      }
      return nextNonce;
    },
    used(nonce) {
      nextNonce = nonce + 1;
    },
    forget() {
      nextNonce = undefined;
    },
  };

  return {
    address: opts.address,
    run(fn) {
      return lock.run(async () => {
        try {
          return await fn(lease);
        } catch (err) {
          nextNonce = undefined;
          throw err;
        }
      });
    },
    resync() {
      nextNonce = undefined;
    },
    peek: () => nextNonce,
  };
}
