/**
 * Sends the operator's transactions: one locally managed nonce sequence for everything the executor
 * sends (order settlements and queued cash settlements share the operator account), locally signed,
 * several in flight at once, each followed to its receipt.
 *
 * A transaction whose fate is unknown (the RPC failed while it was being sent, or went away while
 * its receipt was awaited) is never forgotten: its signed bytes are re-broadcast — the same hash,
 * so it can land at most once — until a receipt appears, or until its nonce has been used without
 * it (dropped), or until the sender is aborted. Later sends wait behind an unknown one so that the
 * nonce sequence never gets a gap.
 */
import { keccak256, type Address, type Hex, type TransactionReceipt } from 'viem';
import { AppError, ChainUnavailableError } from '../errors/app-error.ts';
import { toChainError, type ChainPublicClient, type ChainWalletClient } from './chain-client.ts';
import type { Logger } from '../lib/logger.ts';

/** The part of a pino logger the sender uses. */
type SenderLogger = Pick<Logger, 'info' | 'warn' | 'error' | 'debug'>;

export interface OperatorTxRequest {
  to: Address;
  data: Hex;
  gas: bigint;
}

export interface OperatorSender {
  readonly address: Address;
  /** Signs, sends and waits for the receipt (which may be `reverted`: the caller decides). */
  send(request: OperatorTxRequest, signal?: AbortSignal): Promise<TransactionReceipt>;
  /** Transactions sent and not yet resolved. */
  inFlight(): number;
  /** Forgets the local nonce: the next send reads it from the chain. */
  resync(): void;
}

export interface OperatorSenderOptions {
  publicClient: ChainPublicClient;
  walletClient: ChainWalletClient;
  logger?: SenderLogger;
  /** Receipt polling. Default: the public client's polling interval. */
  pollingIntervalMs?: number;
  /** Re-broadcast an unconfirmed transaction this often. Default 2 s. */
  rebroadcastMs?: number;
  /** Re-read the fee market this often. Default 1 s. */
  feeRefreshMs?: number;
  /** Replace a transaction still pending after this long with higher fees. Default 30 s. */
  replaceAfterMs?: number;
}

/** The node already has, or has already mined, this nonce. */
const NONCE_USED = /nonce too low|already known|already imported|known transaction|replacement transaction underpriced|nonce.*already/i;
const NONCE_GAP = /nonce too high/i;

function messageChain(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const m = (e as { details?: unknown; shortMessage?: unknown; message?: unknown });
    for (const v of [m.details, m.shortMessage, m.message]) if (typeof v === 'string') parts.push(v);
  }
  return parts.join(' | ');
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

export class SendAbortedError extends AppError {
  constructor(detail?: Record<string, unknown>) {
    super('INTERNAL', 'executor: send abandoned on shutdown; the transaction may still land', { retryable: true, detail });
  }
}

/** The transaction's nonce was used by another transaction: it will never land. */
export class TxDroppedError extends AppError {
  constructor(detail?: Record<string, unknown>) {
    super('INTERNAL', 'executor: transaction dropped (its nonce was used by another)', { retryable: true, detail });
  }
}

interface Fees {
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  gasPrice?: bigint;
}

interface Signed {
  hash: Hex;
  raw: Hex;
  nonce: number;
  fees: Fees;
}

export function createOperatorSender(opts: OperatorSenderOptions): OperatorSender {
  const { publicClient, walletClient } = opts;
  const account = walletClient.account;
  const chainId = walletClient.chain.id;
  const polling = opts.pollingIntervalMs ?? publicClient.pollingInterval ?? 100;
  const rebroadcastMs = opts.rebroadcastMs ?? 2_000;
  const feeRefreshMs = opts.feeRefreshMs ?? 1_000;
  const replaceAfterMs = opts.replaceAfterMs ?? 30_000;

  let nextNonce: number | undefined;
  let fees: Fees | undefined;
  let feesAt = 0;
  let inFlight = 0;
  // Serialises nonce allocation and broadcast so transactions reach the node in nonce order.
  let sendLock: Promise<void> = Promise.resolve();

  const withLock = async <T>(fn: () => Promise<T>): Promise<T> => {
    const previous = sendLock;
    let release!: () => void;
    sendLock = new Promise<void>((r) => (release = r));
    await previous;
    try {
      return await fn();
    } finally {
      release();
    }
  };

  const chainNonce = async (blockTag: 'pending' | 'latest'): Promise<number> =>
    publicClient.getTransactionCount({ address: account.address, blockTag });

  const currentFees = async (): Promise<Fees> => {
    if (fees && Date.now() - feesAt < feeRefreshMs) return fees;
    try {
      const f = await publicClient.estimateFeesPerGas();
      // Head-room: full settlement blocks raise the base fee block after block, and a transaction
      // whose fee cap falls behind it waits (and is replaced after `replaceAfterMs`).
      fees = f.maxFeePerGas !== undefined
        ? { maxFeePerGas: f.maxFeePerGas * 3n, maxPriorityFeePerGas: f.maxPriorityFeePerGas }
        : { gasPrice: (f.gasPrice ?? 0n) * 3n };
    } catch {
      const gasPrice = await publicClient.getGasPrice();
      fees = { gasPrice: gasPrice * 3n };
    }
    feesAt = Date.now();
    return fees;
  };

  const sign = async (req: OperatorTxRequest, nonce: number, f: Fees): Promise<Hex> => {
    const base = { chainId, nonce, gas: req.gas, to: req.to, data: req.data } as const;
    return f.gasPrice !== undefined
      ? account.signTransaction({ ...base, type: 'legacy', gasPrice: f.gasPrice })
      : account.signTransaction({
          ...base,
          type: 'eip1559',
          maxFeePerGas: f.maxFeePerGas as bigint,
          maxPriorityFeePerGas: f.maxPriorityFeePerGas as bigint,
        });
  };

  const broadcast = async (raw: Hex): Promise<'sent' | 'known' | 'gap'> => {
    try {
      await publicClient.request({ method: 'eth_sendRawTransaction', params: [raw] });
      return 'sent';
    } catch (err) {
      const text = messageChain(err);
      if (NONCE_USED.test(text)) return 'known';
      if (NONCE_GAP.test(text)) return 'gap';
      throw toChainError(err);
    }
  };

  const receiptOf = async (hash: Hex): Promise<TransactionReceipt | undefined> => {
    try {
      return await publicClient.getTransactionReceipt({ hash });
    } catch (err) {
      if ((err as { name?: string }).name === 'TransactionReceiptNotFoundError') return undefined;
      throw toChainError(err);
    }
  };

  /** Fees for a replacement: the market's now, and at least 12.5% above what it replaces. */
  const bumped = async (old: Fees): Promise<Fees> => {
    fees = undefined;
    const market = await currentFees();
    const up = (a: bigint | undefined, b: bigint | undefined) => {
      const floor = ((b ?? 0n) * 1125n) / 1000n + 1n;
      return (a ?? 0n) > floor ? (a as bigint) : floor;
    };
    return old.gasPrice !== undefined
      ? { gasPrice: up(market.gasPrice ?? market.maxFeePerGas, old.gasPrice) }
      : {
          maxFeePerGas: up(market.maxFeePerGas, old.maxFeePerGas),
          maxPriorityFeePerGas: up(market.maxPriorityFeePerGas, old.maxPriorityFeePerGas),
        };
  };

  /**
   * Follows a signed transaction until one of its versions has a receipt. Transport failures are
   * waited out; the bytes are re-broadcast now and then (a restarted node may have lost its pool);
   * a transaction still pending after `replaceAfterMs` (fees overtaken by the base fee) is
   * replaced by the same call with the same nonce and higher fees — only one version can land.
   */
  const follow = async (sent: Signed, req: OperatorTxRequest, signal?: AbortSignal): Promise<TransactionReceipt> => {
    const versions: Signed[] = [sent];
    const { nonce } = sent;
    let lastBroadcast = Date.now();
    let lastVersionAt = Date.now();
    let outage = false;
    let delay = polling;
    const landed = async (): Promise<TransactionReceipt | undefined> => {
      for (const v of versions) {
        const r = await receiptOf(v.hash);
        if (r) return r;
      }
      return undefined;
    };
    for (;;) {
      if (signal?.aborted) throw new SendAbortedError({ txHash: sent.hash, nonce });
      try {
        const receipt = await landed();
        if (receipt) {
          if (outage) opts.logger?.info({ txHash: receipt.transactionHash }, 'executor: transaction confirmed after an RPC outage');
          return receipt;
        }
        if (Date.now() - lastBroadcast >= rebroadcastMs) {
          lastBroadcast = Date.now();
          const latest = versions[versions.length - 1];
          const result = await broadcast(latest.raw);
          if (result === 'known' && (await chainNonce('latest')) > nonce) {
            // The nonce is used: by one of our versions (receipt) or by something else (dropped).
            const last = await landed();
            if (last) return last;
            nextNonce = undefined;
            throw new TxDroppedError({ txHash: sent.hash, nonce });
          }
          if (Date.now() - lastVersionAt >= replaceAfterMs) {
            lastVersionAt = Date.now();
            const f = await bumped(latest.fees);
            const raw = await sign(req, nonce, f);
            const replacement: Signed = { hash: keccak256(raw), raw, nonce, fees: f };
            if ((await broadcast(raw)) === 'sent') {
              versions.push(replacement);
              opts.logger?.warn({ nonce, txHash: replacement.hash, replaces: latest.hash }, 'executor: transaction still pending; replaced with higher fees');
            }
          }
        }
        delay = polling;
      } catch (err) {
        const mapped = toChainError(err);
        if (!(mapped instanceof ChainUnavailableError)) throw mapped;
        if (!outage) opts.logger?.warn({ txHash: sent.hash, nonce }, 'executor: RPC unavailable while awaiting a receipt; retrying');
        outage = true;
        delay = Math.min(Math.max(delay * 2, 100), 2_000);
      }
      await sleep(delay, signal);
    }
  };

  /**
   * Under the send lock: allocate the nonce, sign, broadcast. When the node cannot be reached the
   * lock is kept and the same bytes are re-broadcast until the node answers, so no later nonce
   * overtakes a transaction that may or may not have been received.
   */
  const signAndBroadcast = (req: OperatorTxRequest, signal?: AbortSignal) =>
    withLock(async (): Promise<Signed> => {
      for (let attempt = 0; ; attempt++) {
        if (signal?.aborted) throw new SendAbortedError();
        let nonce: number;
        let f: Fees;
        try {
          nextNonce ??= await chainNonce('pending');
          nonce = nextNonce;
          f = await currentFees();
        } catch (err) {
          throw toChainError(err);
        }
        const raw = await sign(req, nonce, f);
        const hash = keccak256(raw);
        let result: 'sent' | 'known' | 'gap';
        let delay = 100;
        let warned = false;
        for (;;) {
          try {
            result = await broadcast(raw);
            break;
          } catch (err) {
            if (!(err instanceof ChainUnavailableError)) {
              // Rejected outright (e.g. insufficient funds for gas): the nonce was not used.
              nextNonce = undefined;
              throw err;
            }
            if (signal?.aborted) {
              nextNonce = undefined;
              throw new SendAbortedError({ txHash: hash, nonce });
            }
            if (!warned) opts.logger?.warn({ nonce }, 'executor: RPC unavailable while sending; re-broadcasting the signed transaction');
            warned = true;
            await sleep(delay, signal);
            delay = Math.min(delay * 2, 2_000);
          }
        }
        if (result === 'sent') {
          nextNonce = nonce + 1;
          return { hash, raw, nonce, fees: f };
        }
        if (result === 'known' && (warned || (await receiptOf(hash).catch(() => undefined)))) {
          // After a failed attempt the node may well hold our own bytes (in its pool or mined):
          // they keep the nonce, and `follow` tells a landed transaction from a dropped one.
          nextNonce = nonce + 1;
          return { hash, raw, nonce, fees: f };
        }
        // The nonce is not what the node expects (another sender, a node that lost state): re-read it.
        nextNonce = undefined;
        if (attempt >= 3) {
          throw new AppError('INTERNAL', 'executor: could not obtain a usable nonce', { retryable: true, detail: { nonce, result } });
        }
      }
    });

  const send = async (req: OperatorTxRequest, signal?: AbortSignal): Promise<TransactionReceipt> => {
    inFlight++;
    try {
      const signed = await signAndBroadcast(req, signal);
      return await follow(signed, req, signal);
    } finally {
      inFlight--;
    }
  };

  return {
    address: account.address,
    send,
    inFlight: () => inFlight,
    resync() {
      nextNonce = undefined;
    },
  };
}
