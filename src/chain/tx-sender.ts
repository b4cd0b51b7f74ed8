/**
 * Sends an operator's transactions: locally signed, several in flight at once, each followed to its
 * receipt, with the nonces of the sending address managed locally by its {@link NonceManager}.
 *
 * One sender per address per process: {@link senderFor} answers the same sender (so the same nonce
 * sequence) to every worker that asks for one address — the executor's order settlement and cash
 * settlement today, the One Click relayer and perpetual withdrawals next. Two processes must not
 * send with one key (src/chain/operator-roles.ts gives each role its own).
 *
 * A transaction whose fate is unknown (the RPC failed while it was being sent, or went away while
 * its receipt was awaited) is never forgotten: its signed bytes are re-broadcast — the same hash,
 * so it can land at most once — until a receipt appears, or until its nonce has been used without
 * it (dropped), or until the caller aborts. Later sends wait behind an unknown one so that the
 * nonce sequence never gets a gap. A sender with nothing in flight takes the chain's count before
 * its next send, so a key used elsewhere meanwhile, or a chain reset, costs no stuck transaction.
 */
import { keccak256, parseTransaction, type Address, type Hex, type LocalAccount, type TransactionReceipt } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { AppError, ChainUnavailableError } from '../errors/app-error.ts';
import { sleep } from '../lib/async.ts';
import type { Logger } from '../lib/logger.ts';
import { toChainError, type ChainPublicClient } from './chain-client.ts';
import { createNonceManager, type NonceManager } from './nonce-manager.ts';

export interface TxRequest {
  to: Address;
  data: Hex;
  gas: bigint;
}

/** A signed version of a transaction, as a journal keeps it to resume after a restart. */
export interface SignedTx {
  hash: Hex;
  /** The signed bytes: re-broadcasting them can land the transaction at most once. */
  raw: Hex;
  nonce: number;
}

export interface SendHooks {
  /**
   * Called with every version of the transaction (the first, and each fee replacement) after it is
   * signed and before it is broadcast, holding the address's nonce lock: a journal that stores it
   * here can resume the transaction after a crash ({@link TxSender.resume}) instead of sending the
   * call again with a new nonce. A throw abandons the send before anything is broadcast.
   */
  onSigned?(tx: SignedTx, replaces?: Hex): Promise<void>;
}

export interface TxSender {
  readonly address: Address;
  /** Signs, sends and waits for the receipt (which may be `reverted`: the caller decides). */
  send(request: TxRequest, signal?: AbortSignal, hooks?: SendHooks): Promise<TransactionReceipt>;
  /**
   * Follows transactions signed before (by an earlier process, from its journal): re-broadcasts the
   * latest version and waits for a receipt of any of them. Throws TxDroppedError when their nonce
   * was used by another transaction. Resume every journalled transaction, in nonce order, before
   * new sends: the next send then takes a nonce after theirs.
   */
  resume(versions: readonly SignedTx[], request: TxRequest, signal?: AbortSignal, hooks?: SendHooks): Promise<TransactionReceipt>;
  /** Sends (of every worker sharing this sender) not yet resolved. */
  inFlight(): number;
  /** Forgets the local nonce: the next send reads it from the chain. */
  resync(): void;
}

export type SenderLogger = Pick<Logger, 'info' | 'warn'>;

export interface TxSenderTuning {
  /** Receipt polling. Default: the public client's polling interval. */
  pollingIntervalMs?: number;
  /** Re-broadcast an unconfirmed transaction this often. Default 2 s. */
  rebroadcastMs?: number;
  /** Re-read the fee market this often. Default 1 s. */
  feeRefreshMs?: number;
  /** Replace a transaction still pending after this long with higher fees. Default 30 s. */
  replaceAfterMs?: number;
}

export interface TxSenderOptions extends TxSenderTuning {
  publicClient: ChainPublicClient;
  /** A local account (it signs here; the node never holds the key). */
  account: LocalAccount;
  /** The address's nonce sequence. Default: a new one (use {@link senderFor} to share it). */
  nonces?: NonceManager;
  logger?: SenderLogger;
}

/** The node already has, or has already mined, this nonce. */
const NONCE_USED = /nonce too low|already known|already imported|known transaction|replacement transaction underpriced|nonce.*already/i;
const NONCE_GAP = /nonce too high/i;
const NO_FUNDS = /insufficient funds/i;

function messageChain(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const m = e as { details?: unknown; shortMessage?: unknown; message?: unknown };
    for (const v of [m.details, m.shortMessage, m.message]) if (typeof v === 'string') parts.push(v);
  }
  return parts.join(' | ');
}

export class SendAbortedError extends AppError {
  constructor(detail?: Record<string, unknown>) {
    super('INTERNAL', 'sender: send abandoned on shutdown; the transaction may still land', { retryable: true, detail });
  }
}

/**
 * The node refused the transaction because the sending account cannot pay for its gas: nothing was
 * broadcast and the nonce stays free. Not retried by the sender: the account needs funding.
 */
export class SenderUnfundedError extends AppError {
  constructor(detail?: Record<string, unknown>) {
    super('CHAIN_UNAVAILABLE', 'chain: the sending account cannot pay for gas', { detail });
  }
}

/** The transaction's nonce was used by another transaction: it will never land. */
export class TxDroppedError extends AppError {
  constructor(detail?: Record<string, unknown>) {
    super('INTERNAL', 'sender: transaction dropped (its nonce was used by another)', { retryable: true, detail });
  }
}

interface Fees {
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  gasPrice?: bigint;
}

interface Signed extends SignedTx {
  fees: Fees;
}

/** The fees a signed transaction pays (for a replacement of one resumed from a journal). */
function feesOf(raw: Hex): Fees {
  const tx = parseTransaction(raw);
  return tx.gasPrice !== undefined && tx.maxFeePerGas === undefined
    ? { gasPrice: tx.gasPrice }
    : { maxFeePerGas: tx.maxFeePerGas, maxPriorityFeePerGas: tx.maxPriorityFeePerGas };
}

export function createTxSender(opts: TxSenderOptions): TxSender {
  const { publicClient, account } = opts;
  if (!account.signTransaction) throw new AppError('INTERNAL', 'sender: the account cannot sign transactions locally');
  const signTransaction = account.signTransaction.bind(account);
  const chainId = publicClient.chain.id;
  const polling = opts.pollingIntervalMs ?? publicClient.pollingInterval ?? 100;
  const rebroadcastMs = opts.rebroadcastMs ?? 2_000;
  const feeRefreshMs = opts.feeRefreshMs ?? 1_000;
  const replaceAfterMs = opts.replaceAfterMs ?? 30_000;
  const log = opts.logger;

  const chainNonce = async (blockTag: 'pending' | 'latest'): Promise<number> =>
    publicClient.getTransactionCount({ address: account.address, blockTag });
  const nonces = opts.nonces ?? createNonceManager({ address: account.address, readPending: () => chainNonce('pending') });
  if (nonces.address.toLowerCase() !== account.address.toLowerCase()) {
    throw new AppError('INTERNAL', 'sender: the nonce manager belongs to another address');
  }

  let fees: Fees | undefined;
  let feesAt = 0;
  let inFlight = 0;
  /** Broadcast and not yet resolved: while any is, the local nonce is ahead of what the chain shows as mined. */
  let outstanding = 0;

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

  const sign = async (req: TxRequest, nonce: number, f: Fees): Promise<Hex> => {
    const base = { chainId, nonce, gas: req.gas, to: req.to, data: req.data } as const;
    return f.gasPrice !== undefined
      ? signTransaction({ ...base, type: 'legacy', gasPrice: f.gasPrice })
      : signTransaction({
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
      if (NO_FUNDS.test(text)) throw new SenderUnfundedError({ address: account.address });
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

  /**
   * Whether the node certainly lacks our transaction: neither pending nor mined. A node that
   * answered "already known", "nonce too low" or "replacement underpriced" to our own bytes may
   * well hold them (a dropped answer to an earlier broadcast, viem's own retry of it): re-signing
   * the call at another nonce would then send it twice. When the lookup itself fails, we cannot
   * know, and keep the nonce: `follow` tells a landed transaction from a dropped one.
   */
  const certainlyAbsent = async (hash: Hex): Promise<boolean> => {
    try {
      await publicClient.getTransaction({ hash });
      return false;
    } catch (err) {
      if ((err as { name?: string }).name !== 'TransactionNotFoundError') return false;
    }
    try {
      return (await receiptOf(hash)) === undefined;
    } catch {
      return false;
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
  const follow = async (sent: Signed, req: TxRequest, signal?: AbortSignal, hooks?: SendHooks, earlier: readonly Signed[] = []): Promise<TransactionReceipt> => {
    const versions: Signed[] = [...earlier, sent];
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
          if (outage) log?.info({ txHash: receipt.transactionHash }, 'sender: transaction confirmed after an RPC outage');
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
            nonces.resync();
            throw new TxDroppedError({ txHash: sent.hash, nonce });
          }
          if (Date.now() - lastVersionAt >= replaceAfterMs) {
            lastVersionAt = Date.now();
            const f = await bumped(latest.fees);
            const raw = await sign(req, nonce, f);
            const replacement: Signed = { hash: keccak256(raw), raw, nonce, fees: f };
            await hooks?.onSigned?.({ hash: replacement.hash, raw, nonce }, latest.hash);
            if ((await broadcast(raw)) === 'sent') {
              versions.push(replacement);
              log?.warn({ nonce, txHash: replacement.hash, replaces: latest.hash }, 'sender: transaction still pending; replaced with higher fees');
            }
          }
        }
        delay = polling;
      } catch (err) {
        const mapped = toChainError(err);
        if (!(mapped instanceof ChainUnavailableError)) throw mapped;
        if (!outage) log?.warn({ txHash: sent.hash, nonce }, 'sender: RPC unavailable while awaiting a receipt; retrying');
        outage = true;
        delay = Math.min(Math.max(delay * 2, 100), 2_000);
      }
      await sleep(delay, signal);
    }
  };

  /**
   * Holding the address's nonce lock: take the nonce, sign, broadcast. When the node cannot be
   * reached the lock is kept and the same bytes are re-broadcast until the node answers, so no
   * later nonce overtakes a transaction that may or may not have been received.
   */
  const signAndBroadcast = (req: TxRequest, signal?: AbortSignal, hooks?: SendHooks) =>
    nonces.run(async (lease): Promise<Signed> => {
      for (let attempt = 0; ; attempt++) {
        if (signal?.aborted) throw new SendAbortedError();
        let nonce: number;
        let f: Fees;
        try {
          nonce = await lease.next({ fresh: outstanding === 0 });
          f = await currentFees();
        } catch (err) {
          throw toChainError(err);
        }
        const raw = await sign(req, nonce, f);
        const hash = keccak256(raw);
        await hooks?.onSigned?.({ hash, raw, nonce });
        let result: 'sent' | 'known' | 'gap';
        let delay = 100;
        let warned = false;
        for (;;) {
          try {
            result = await broadcast(raw);
            break;
          } catch (err) {
            // Rejected outright (e.g. insufficient funds for gas): the nonce was not used, and
            // the lock's failure path forgets it.
            if (!(err instanceof ChainUnavailableError)) throw err;
            if (signal?.aborted) throw new SendAbortedError({ txHash: hash, nonce });
            if (!warned) log?.warn({ nonce }, 'sender: RPC unavailable while sending; re-broadcasting the signed transaction');
            warned = true;
            await sleep(delay, signal);
            delay = Math.min(delay * 2, 2_000);
          }
        }
        if (result === 'sent' || (result === 'known' && (warned || !(await certainlyAbsent(hash))))) {
          // After a failed attempt the node may well hold our own bytes (in its pool or mined):
          // they keep the nonce, and `follow` tells a landed transaction from a dropped one.
          lease.used(nonce);
          outstanding++;
          return { hash, raw, nonce, fees: f };
        }
        // The nonce is not what the node expects (another sender, a node that lost state): re-read it.
        lease.forget();
        if (attempt >= 3) {
          throw new AppError('INTERNAL', 'sender: could not obtain a usable nonce', { retryable: true, detail: { nonce, result } });
        }
      }
    });

  const send = async (req: TxRequest, signal?: AbortSignal, hooks?: SendHooks): Promise<TransactionReceipt> => {
    inFlight++;
    let signed: Signed | undefined;
    try {
      signed = await signAndBroadcast(req, signal, hooks);
      return await follow(signed, req, signal, hooks);
    } finally {
      inFlight--;
      if (signed) outstanding--;
    }
  };

  /**
   * Re-broadcasts the latest journalled version under the nonce lock, so that a send queued behind
   * it takes the chain's count with this transaction in the pool. The local nonce is forgotten
   * rather than set: the journal may hold a nonce the chain has long passed.
   */
  const resume = async (journalled: readonly SignedTx[], req: TxRequest, signal?: AbortSignal, hooks?: SendHooks): Promise<TransactionReceipt> => {
    if (journalled.length === 0) throw new AppError('INTERNAL', 'sender: nothing to resume');
    const versions: Signed[] = journalled.map((v) => ({ ...v, fees: feesOf(v.raw) }));
    const latest = versions[versions.length - 1];
    if (versions.some((v) => v.nonce !== latest.nonce)) throw new AppError('INTERNAL', 'sender: resumed versions of different nonces');
    inFlight++;
    outstanding++;
    try {
      await nonces.run(async (lease) => {
        for (let delay = 100; ; delay = Math.min(delay * 2, 2_000)) {
          try {
            await broadcast(latest.raw);
            break;
          } catch (err) {
            // Refused outright (a gap, funds): `follow` still finds a receipt if a version landed.
            if (!(err instanceof ChainUnavailableError)) break;
            if (signal?.aborted) throw new SendAbortedError({ txHash: latest.hash, nonce: latest.nonce });
            await sleep(delay, signal);
          }
        }
        lease.forget();
      });
      return await follow(latest, req, signal, hooks, versions.slice(0, -1));
    } finally {
      inFlight--;
      outstanding--;
    }
  };

  return {
    address: account.address,
    send,
    resume,
    inFlight: () => inFlight,
    resync: () => nonces.resync(),
  };
}

// ------------------------------------------------------------------ one sender per address

export interface SenderForOptions extends TxSenderTuning {
  publicClient: ChainPublicClient;
  /** The key, or an account made from it; one of the two. Never logged. */
  privateKey?: Hex;
  account?: LocalAccount;
  /** Used when this call creates the sender. */
  logger?: SenderLogger;
}

export interface SenderRegistry {
  /**
   * The sender of this address on this chain: created on the first call, the same object (and so
   * the same nonce sequence) on every later one, whoever asks. Tuning and logger of later calls
   * are ignored.
   */
  senderFor(opts: SenderForOptions): TxSender;
  /** Every sender created so far. */
  senders(): TxSender[];
}

const clientIds = new WeakMap<object, number>();
let nextClientId = 0;

/**
 * What identifies a nonce sequence here: the chain id, the node (local test chains all have chain
 * id 31337, and each is its own chain) and the address.
 */
function sequenceKey(publicClient: ChainPublicClient, address: Address): string {
  const url = (publicClient.transport as { url?: unknown }).url;
  let node: string;
  if (typeof url === 'string' && url !== '') node = url;
  else {
    let id = clientIds.get(publicClient);
    if (id === undefined) clientIds.set(publicClient, (id = ++nextClientId));
    node = `client#${id}`;
  }
  return `${publicClient.chain.id}|${node}|${address.toLowerCase()}`;
}

export function createSenderRegistry(): SenderRegistry {
  const senders = new Map<string, TxSender>();
  return {
    senderFor(opts) {
      if ((opts.privateKey === undefined) === (opts.account === undefined)) {
        throw new AppError('INTERNAL', 'sender: pass either a private key or an account');
      }
      const account = opts.account ?? privateKeyToAccount(opts.privateKey as Hex);
      const key = sequenceKey(opts.publicClient, account.address);
      let sender = senders.get(key);
      if (!sender) {
        const { privateKey: _key, account: _account, ...rest } = opts;
        sender = createTxSender({ ...rest, account });
        senders.set(key, sender);
      }
      return sender;
    },
    senders: () => [...senders.values()],
  };
}

const processSenders = createSenderRegistry();

/** The process's sender for this key: every worker of the process that sends with it shares one. */
export function senderFor(opts: SenderForOptions): TxSender {
  return processSenders.senderFor(opts);
}
