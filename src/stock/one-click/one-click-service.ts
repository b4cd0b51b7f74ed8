/**
 * One Click for the stock API (seed §3A, contract.md §A Chain): the delegation a bound wallet signs
 * (status, prepare, enable, disable) and the relay of every `send` endpoint's call through the One
 * Click router, which forwards the user to the StockRouter as the original sender.
 *
 * The API decides everything that can be decided before a transaction exists — the key's bound
 * wallet, the delegation, the call's pre-checks, the gas (the estimate × 1.5, or the client's
 * `gasLimit`) and whether the relayer can pay for it — and answers a validation error with nothing
 * queued when one fails. What passes is queued in the relay journal for the relayer
 * (src/stock/relayer/), and the call waits for the receipt (bounded by `waitMs`).
 */
import { exactNumber } from '../exact-number.ts';
import { randomUUID } from 'node:crypto';
import { encodeFunctionData, formatEther, type Address, type Hex } from 'viem';
import { oneClickRouterAbi } from '../../chain/abi/generated/index.ts';
import { delegateType, oneClickDomain, type DelegateMessage } from '../../chain/one-click-typed-data.ts';
import { parseSignature, type CompleteTypedData } from '../../chain/typed-data.ts';
import type { AuthKey } from '../../auth/api-key-service.ts';
import { AppError, ChainRevertError, ConflictError, ValidationError } from '../../errors/app-error.ts';
import { checkDeadline, lowerAddress } from '../order-request.ts';
import type { OneClickDeps, StockApiDeps } from '../stock-deps.ts';
import { ALREADY_DELEGATED, FINAL_RELAY_STATUSES, findRelayRequestByIdempotencyKey, getRelayRequest, insertRelayRequest, type RelayKind, type RelayRequest } from '../store/relay-request-store.ts';
import { isUniqueViolation } from '../../storage/storage-errors.ts';
import { IDEMPOTENCY_HEADER } from '../../http/idempotency-key.ts';
import { PROJECTED_KINDS, waitUntilProjected } from './answer-barrier.ts';
import { venueNow } from '../../lib/venue-clock.ts';

/** How long a mined send waits for the indexer when INDEX_WAIT_MS is not configured (as the `…/tx` endpoints). */
const DEFAULT_INDEX_WAIT_MS = 10_000;

/** How many nonces back `1ct/enable` looks to tell a used signature from a foreign one. */
const EARLIER_NONCES_CHECKED = 8n;

/** Gas a client may ask for: the intrinsic minimum up to a block's worth. */
export const MAX_GAS_LIMIT = 30_000_000n;
/** The buffer over the node's estimate (seed §7A: 1.5 to 2 times). */
const GAS_BUFFER_NUM = 3n;
const GAS_BUFFER_DEN = 2n;

export interface RelayOutcome {
  requestId: string;
  /**
   * `mined`: mined, and what the ids name is readable. `pending`: the receipt did not come within
   * the wait (`blockNumber` null), or it came and the indexer had not projected its block within
   * INDEX_WAIT_MS (`blockNumber` set, no ids): poll `orders/tx/{txHash}` or the lists.
   */
  status: 'mined' | 'pending';
  txHash: Hex | null;
  blockNumber: string | null;
  gasUsed: string | null;
  orderIds: string[];
  operationIds: string[];
}

export interface OneClickStatus {
  status: 'enabled' | 'disabled';
  delegatee: Address;
}

/** One Click is not configured in this process (no relayer address): 503, nothing to fix in the request. */
export class OneClickUnavailableError extends AppError {
  constructor(message: string, options?: { detail?: Record<string, unknown> }) {
    super('CHAIN_UNAVAILABLE', message, { retryable: true, ...options });
  }
}

/** The relayed transaction was mined and reverted: the answer carries its hash. */
export class RelayRevertedError extends AppError {
  constructor(txHash: Hex, reason: string) {
    super('CHAIN_REVERT', `transaction reverted on chain (${reason}); txHash ${txHash}`, { data: { txHash, status: 'reverted', reason } });
  }
}

function unfunded(relayer: Address, detail: Record<string, unknown> = {}): OneClickUnavailableError {
  return new OneClickUnavailableError('relayer: cannot pay for gas (its ETH balance is too low); nothing was sent', { detail: { relayer, ...detail } });
}

/** 21,000 plus 16 gas per non-zero and 4 per zero calldata byte: below it the node refuses the transaction. */
export function intrinsicGas(data: Hex): bigint {
  let gas = 21_000n;
  for (let i = 2; i < data.length; i += 2) gas += data.slice(i, i + 2) === '00' ? 4n : 16n;
  return gas;
}

/** `gasLimit` as a client sends it: an integer, or a decimal string of one. */
export function parseGasLimit(raw: unknown): bigint | undefined {
  if (raw === undefined || raw === null) return undefined;
  let v: bigint;
  if (typeof raw === 'number' && Number.isSafeInteger(raw)) v = BigInt(raw);
  else if (typeof raw === 'string' && /^[1-9]\d{0,9}$/.test(raw)) v = BigInt(raw);
  else throw new ValidationError('gasLimit', 'must be a positive integer');
  if (v > MAX_GAS_LIMIT) throw new ValidationError('gasLimit', `at most ${MAX_GAS_LIMIT}`);
  return v;
}

export interface OneClickService {
  status(key: AuthKey): Promise<OneClickStatus>;
  prepare(key: AuthKey, deadline: number | undefined): Promise<{ delegatee: Address; nonce: number; deadline: number; signPayload: CompleteTypedData<'Delegate'> }>;
  /**
   * Submits the signed delegation. A signature that was already submitted (an earlier attempt, a
   * concurrent `enable`, anyone holding it) answers `enabled` with `txHash` null when the relayer is
   * the wallet's delegate now: the race was lost to the same delegation, nothing failed.
   */
  enable(key: AuthKey, body: { signature?: unknown; deadline?: number }): Promise<OneClickStatus & { txHash: Hex | null; requestId: string | null }>;
  /**
   * Ends the relayer's delegation, if any, and always refuses on chain every delegation to the
   * relayer the wallet signed so far (`refuseDelegation`): a signature handed out and never enabled
   * can no longer be submitted by anyone. Sends a transaction every time.
   */
  disable(key: AuthKey): Promise<OneClickStatus & { txHash: Hex | null; requestId: string | null }>;
  /**
   * The wallet a send acts for: the key's bound wallet. A body `userAddress` is accepted only when
   * it is that wallet (the user never comes from the body).
   */
  sendingUser(key: AuthKey, bodyUser?: string): Address;
  /** Validation error unless `user` has delegated to the relayer. */
  assertEnabled(user: Address): Promise<void>;
  /**
   * Relays a StockRouter call for `user` through the One Click router and waits for its receipt,
   * then for the indexer to project it (answer-barrier.ts): a `mined` answer's ids are readable at
   * once. Checks the delegation first; `checks` are the send's own pre-checks, started by the
   * caller, and answered before the gas estimate's verdict. `cancels`: the order a cancel cancels.
   */
  relay(
    key: AuthKey,
    user: Address,
    call: { kind: RelayKind; routerCalldata: Hex; gasLimit?: bigint; checks?: ReadonlyArray<Promise<void>>; cancels?: string; idempotency?: SendIdempotency },
  ): Promise<RelayOutcome>;
  /**
   * The answer to a send retried under its `Idempotency-Key`: the request the first attempt queued,
   * followed to its end as the first attempt would have been; undefined when the key is new (or
   * none was sent). The same key with another request is a ConflictError. Called before a send's
   * checks, which the first attempt may have made false (the balance it spent).
   */
  previousSend(key: AuthKey, idempotency: SendIdempotency | undefined): Promise<RelayOutcome | undefined>;
}

/** A send's `Idempotency-Key` and the fingerprint of its request (src/http/idempotency-key.ts). */
export interface SendIdempotency {
  key: string;
  fingerprint: string;
}

export function createOneClickService(deps: StockApiDeps): OneClickService {
  const now = deps.now ?? venueNow;
  const nowSeconds = () => Math.floor(now() / 1000);
  // Read when used: a chain started after the API was built has its contracts only then.
  const router = () => deps.contracts.oneClickRouter;
  let domainOnce: ReturnType<typeof oneClickDomain> | undefined;
  const domain = () => (domainOnce ??= oneClickDomain(deps.chainId, router()));

  const configured = (): OneClickDeps => {
    if (!deps.oneClick) throw new OneClickUnavailableError('One Click: no relayer is configured for this API (RELAYER_ADDRESS)');
    return deps.oneClick;
  };

  function boundUser(key: AuthKey): Address {
    if (!key.userAddress) throw new ValidationError('apiKey', 'has no bound userAddress: One Click acts only for the wallet bound to the key');
    return lowerAddress(key.userAddress);
  }

  async function status(key: AuthKey): Promise<OneClickStatus> {
    const { relayer } = configured();
    const view = await deps.chain.oneClick(boundUser(key));
    return { status: view.delegatee.toLowerCase() === relayer.toLowerCase() ? 'enabled' : 'disabled', delegatee: relayer };
  }

  /**
   * Gas, funds, journal, wait: the shared tail of every relayed transaction. `checks` (the send's
   * pre-checks, already started) run beside the delegation check, the estimate and the funds read —
   * one round of concurrent chain reads, which the API's client sends as one JSON-RPC batch — and
   * the first failure in that order is the answer.
   */
  async function submit(
    key: AuthKey,
    user: Address,
    kind: RelayKind,
    data: Hex,
    opts: { gasLimit?: bigint; checks?: ReadonlyArray<Promise<void>>; requireDelegation?: boolean; idempotency?: SendIdempotency },
  ): Promise<RelayRequest> {
    const oc = configured();
    const { gasLimit } = opts;
    const gasP: Promise<bigint> = (async () => {
      if (gasLimit !== undefined) {
        const floor = intrinsicGas(data);
        if (gasLimit < floor) throw new ValidationError('gasLimit', `below the transaction's intrinsic gas ${floor}`);
        return gasLimit;
      }
      try {
        const estimate = await deps.chain.estimateGas({ from: oc.relayer, to: router(), data });
        return (estimate * GAS_BUFFER_NUM + GAS_BUFFER_DEN - 1n) / GAS_BUFFER_DEN;
      } catch (err) {
        if (err instanceof ChainRevertError) {
          throw new ValidationError('transaction', `would revert on chain${err.errorName ? ` (${err.errorName})` : ''}; nothing was sent`);
        }
        // A node that checks the sender's funds while estimating (anvil does not) says so here.
        if (err instanceof AppError && err.detail?.reason === 'InsufficientFundsError') throw unfunded(oc.relayer);
        throw err;
      }
    })();
    const fundsP = deps.chain.gasFunds(oc.relayer);
    const enabledP = opts.requireDelegation === false ? Promise.resolve() : assertEnabled(user);
    const settled = await Promise.allSettled([enabledP, ...(opts.checks ?? []), gasP, fundsP]);
    for (const s of settled) if (s.status === 'rejected') throw s.reason;
    const gas = await gasP;
    const funds = await fundsP;
    const cost = gas * funds.maxFeePerGas;
    if (funds.balance < cost) throw unfunded(oc.relayer, { balance: formatEther(funds.balance), needs: formatEther(cost) });
    const requestId = randomUUID();
    try {
      await insertRelayRequest(deps.db, { requestId, apiKey: key.apiKey, userAddress: user, kind, to: router(), data, gasLimit: gas, createdAt: now(), idempotency: opts.idempotency });
    } catch (err) {
      // Two attempts under one key at once: the one that queued first is the request.
      if (!opts.idempotency || !isUniqueViolation(err)) throw err;
      const first = await earlierRequest(key, opts.idempotency);
      if (!first) throw err;
      return awaitResolution(oc, first.requestId);
    }
    oc.signals.queued();
    return awaitResolution(oc, requestId);
  }

  /** The request queued earlier under this key, if any; a ConflictError if it was another request. */
  async function earlierRequest(key: AuthKey, idempotency: SendIdempotency): Promise<RelayRequest | undefined> {
    const found = await findRelayRequestByIdempotencyKey(deps.db, key.apiKey, idempotency.key);
    if (!found) return undefined;
    if (found.fingerprint !== idempotency.fingerprint) {
      throw new ConflictError(`${IDEMPOTENCY_HEADER}: already used by another request of this API key; use a new key for a new request`);
    }
    return found.request;
  }

  /** A mined request's answer once its block is projected, so its ids are readable at once (else `pending`). */
  async function projectedOutcome(out: RelayOutcome, kind: RelayKind, cancels?: string): Promise<RelayOutcome> {
    if (out.status !== 'mined' || out.txHash === null || !PROJECTED_KINDS.has(kind)) return out;
    const projected = await waitUntilProjected(
      deps.db,
      { kind, txHash: out.txHash, result: { orderIds: out.orderIds, operationIds: out.operationIds }, cancels },
      { waitMs: deps.indexWaitMs ?? DEFAULT_INDEX_WAIT_MS, pollMs: configured().pollMs },
    );
    return projected ? out : { ...out, status: 'pending', orderIds: [], operationIds: [] };
  }

  /**
   * The earlier nonce `signature` is a delegation of, if it is one of the last few (the nonce moves
   * by one per delegation, `undelegate` and refusal): a replayed or cancelled signature, told apart
   * from one by another wallet.
   */
  async function earlierNonce(message: DelegateMessage, signature: Hex): Promise<bigint | undefined> {
    for (let n = message.nonce - 1n; n >= 0n && n >= message.nonce - EARLIER_NONCES_CHECKED; n--) {
      if ((await delegateType.recoverSigner(domain(), { ...message, nonce: n } as unknown as Record<string, unknown>, signature)).toLowerCase() === message.user.toLowerCase()) return n;
    }
    return undefined;
  }

  async function assertEnabled(user: Address): Promise<void> {
    const { relayer } = configured();
    const view = await deps.chain.oneClick(user);
    if (view.delegatee.toLowerCase() !== relayer.toLowerCase()) {
      throw new ValidationError('oneClick', `not enabled for ${user}: enable it with 1ct/prepare and 1ct/enable first`);
    }
  }

  async function awaitResolution(oc: OneClickDeps, requestId: string): Promise<RelayRequest> {
    const deadline = Date.now() + oc.waitMs;
    for (;;) {
      // Listening before reading: a change between the read and the wait is not missed.
      const next = oc.signals.nextChange(requestId, Math.max(1, Math.min(deadline - Date.now(), oc.pollMs)));
      const r = await getRelayRequest(deps.db, requestId);
      if (!r) {
        next.cancel();
        throw new AppError('INTERNAL', 'relay request vanished');
      }
      if (FINAL_RELAY_STATUSES.has(r.status) || Date.now() >= deadline) {
        next.cancel();
        return r;
      }
      await next.wait;
    }
  }

  /** A final request as the answer: mined, or an error saying what happened; pending otherwise. */
  function outcomeOf(r: RelayRequest): RelayOutcome {
    if (r.status === 'reverted') throw new RelayRevertedError(r.txHash as Hex, r.error ?? 'reverted');
    if (r.status === 'failed') throw new OneClickUnavailableError(r.error ?? 'relayer: the transaction could not be sent; nothing was sent');
    return {
      requestId: r.requestId,
      status: r.status === 'mined' ? 'mined' : 'pending',
      txHash: r.txHash,
      blockNumber: r.blockNumber === null ? null : r.blockNumber.toString(),
      gasUsed: r.gasUsed === null ? null : r.gasUsed.toString(),
      orderIds: r.result?.orderIds ?? [],
      operationIds: r.result?.operationIds ?? [],
    };
  }

  return {
    status,

    async prepare(key, rawDeadline) {
      const { relayer } = configured();
      const user = boundUser(key);
      const deadline = checkDeadline(rawDeadline, nowSeconds());
      const nonce = await deps.chain.oneClickNonce(user, relayer);
      const signPayload = delegateType.build(domain(), { user, delegatee: relayer, nonce, deadline });
      // A number as Anchored documents it, printed from its digits (a uint64 may pass 2^53).
      return { delegatee: relayer, nonce: exactNumber(nonce.toString()), deadline, signPayload };
    },

    async enable(key, body) {
      const { relayer } = configured();
      const user = boundUser(key);
      const signature = parseSignature(body.signature);
      const deadline = checkDeadline(body.deadline, nowSeconds());
      // The payload is rebuilt as prepare answered it: only a signature over exactly that recovers
      // to the user. A wrong wallet, an altered payload or a used nonce all recover to someone else.
      const nonce = await deps.chain.oneClickNonce(user, relayer);
      const message: DelegateMessage = { user, delegatee: relayer, nonce, deadline };
      const signer = await delegateType.recoverSigner(domain(), { ...message }, signature);
      /** Lost to the same delegation: the relayer is the wallet's delegate now. */
      const alreadyEnabled = async () => {
        const now = await status(key);
        return now.status === 'enabled' ? { ...now, txHash: null, requestId: null } : undefined;
      };
      if (signer.toLowerCase() !== user) {
        const used = await earlierNonce(message, signature);
        if (used !== undefined) {
          const enabled = await alreadyEnabled();
          if (enabled) return enabled;
          throw new ValidationError('signature', `already used: delegation nonce ${used} was consumed or cancelled (1ct/disable); call 1ct/prepare again`);
        }
        throw new ValidationError(
          'signature',
          `recovers to ${signer}, not signPayload.message.user ${user}: signed by another wallet or over a payload altered after 1ct/prepare`,
        );
      }
      const data = encodeFunctionData({ abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [user, relayer, deadline, signature] });
      let r: RelayRequest;
      try {
        r = await submit(key, user, 'delegate', data, { requireDelegation: false });
      } catch (err) {
        // The nonce moved between the read above and the estimate: the same signature mined meanwhile.
        if (err instanceof ValidationError && err.field === 'transaction' && err.message.includes('InvalidSigner')) {
          const enabled = await alreadyEnabled();
          if (enabled) return enabled;
        }
        throw err;
      }
      if (r.status === 'mined' && r.error === ALREADY_DELEGATED) return { status: 'enabled', delegatee: relayer, txHash: null, requestId: r.requestId };
      const out = outcomeOf(r);
      return { status: out.status === 'mined' ? 'enabled' : (await status(key)).status, delegatee: relayer, txHash: out.txHash, requestId: out.requestId };
    },

    async disable(key) {
      const { relayer } = configured();
      const user = boundUser(key);
      // Always sent, delegated or not: a delegation the wallet signed and never enabled must not be
      // submittable after disable (the router ends the delegation too when the relayer holds it).
      const data = encodeFunctionData({ abi: oneClickRouterAbi, functionName: 'refuseDelegation', args: [user] });
      const out = outcomeOf(await submit(key, user, 'undelegate', data, { requireDelegation: false }));
      return { status: out.status === 'mined' ? 'disabled' : (await status(key)).status, delegatee: relayer, txHash: out.txHash, requestId: out.requestId };
    },

    sendingUser(key, bodyUser) {
      configured();
      const user = boundUser(key);
      if (bodyUser !== undefined && bodyUser.toLowerCase() !== user) {
        throw new ValidationError('userAddress', `must be the key's bound wallet ${user} or left out: a send acts only for it`);
      }
      return user;
    },

    assertEnabled,

    async relay(key, user, call) {
      // Handled here at once: a check that fails before submit() awaits it must not go unhandled.
      for (const c of call.checks ?? []) c.catch(() => undefined);
      const data = encodeFunctionData({ abi: oneClickRouterAbi, functionName: 'execute', args: [user, call.routerCalldata] });
      const out = outcomeOf(await submit(key, user, call.kind, data, { gasLimit: call.gasLimit, checks: call.checks, idempotency: call.idempotency }));
      // The receipt is in hand; the reads are not, until the indexer has projected its block.
      return projectedOutcome(out, call.kind, call.cancels);
    },

    async previousSend(key, idempotency) {
      if (!idempotency) return undefined;
      const first = await earlierRequest(key, idempotency);
      if (!first) return undefined;
      const out = outcomeOf(await awaitResolution(configured(), first.requestId));
      return projectedOutcome(out, first.kind);
    },
  };
}
