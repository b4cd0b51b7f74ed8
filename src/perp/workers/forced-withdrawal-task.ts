/**
 * Answers the forced withdrawals accounts file on chain (docs/security.md, "Forced withdrawals"), in
 * the perp-engine role with the perp operator's key. A forced request the venue neither pays nor
 * rejects within the vault's `operatorSilence()` lets anyone freeze the vault for good, so a venue
 * that means to keep running answers every one:
 *
 * 1. The vault's `ForcedWithdrawalRequested` events name the accounts (followed from the deployment
 *    block); the vault's own `forcedWithdrawal(account)` view says what is open, so a reorg or a
 *    restart changes nothing: the chain is the list.
 * 2. The engine reserves the amount (`requestWithdrawal` with `forced`: up to the account's equity,
 *    not only its withdrawable part; an account left short of margin is liquidated as any other) under
 *    the withdrawal id `forcedWithdrawalIdOf(account, requestedAt)`, then `payForcedWithdrawal` pays the
 *    account itself and the engine settles it PAID. The cap or a pause make it wait; both are retried.
 * 3. When the engine refuses (the account holds less than it asked), the vault is shown so with the
 *    account's leaf of a root posted after the request (`rejectForcedWithdrawal`); until such a root
 *    is on chain (one funding interval at most) the task waits.
 * 4. A reservation whose request is gone from the vault without being paid (the account cancelled
 *    it, or it was rejected) is released (`settleWithdrawal` FAILED).
 *
 * The regular withdrawal task leaves forced reservations alone (there is no signed request to relay).
 */
import { encodeAbiParameters, encodeFunctionData, keccak256, type Address, type Hex } from 'viem';
import { marginVaultAbi, reserveRegistryAbi } from '../../chain/abi/generated/index.ts';
import { toChainError, type ChainPublicClient } from '../../chain/chain-client.ts';
import { ChainRevertError } from '../../errors/app-error.ts';
import { periodic, type PeriodicTask } from '../../lib/async.ts';
import type { Logger } from '../../lib/logger.ts';
import { accountProof } from '../reserves/proof-service.ts';
import type { WithdrawalTaskOptions } from './withdrawal-task.ts';
import { venueChainNow } from '../../lib/venue-clock.ts';

/** Domain tag of a forced withdrawal's id: no other hash of an address and a time collides with it. */
export const FORCED_WITHDRAWAL_ID_TAG = 'tokex.perp.forced-withdrawal';
const REQUEST_PREFIX = 'forced:';
const SETTLE_PREFIX = 'forced-settle:';
/** Refusals that clear once time passes or the guardian lifts the pause: tried again next round. */
const WAITS = new Set(['WithdrawalCapExceeded', 'VenuePaused', 'InsufficientVaultBalance']);

/** The vault's bytes32 id (and the engine's withdrawal id) of `account`'s forced request filed at `requestedAt`. */
export function forcedWithdrawalIdOf(account: string, requestedAt: bigint): Hex {
  return keccak256(encodeAbiParameters([{ type: 'string' }, { type: 'address' }, { type: 'uint64' }], [FORCED_WITHDRAWAL_ID_TAG, account.toLowerCase() as Address, requestedAt]));
}

/** What both payment tasks of the vault take (the regular one's options, src/perp/workers/withdrawal-task.ts). */
export interface ForcedWithdrawalTaskOptions extends Pick<WithdrawalTaskOptions, 'db' | 'gateway' | 'engine' | 'publicClient' | 'sender' | 'marginVault'> {
  /** The vault's deployment block: where its events start. */
  fromBlock: bigint;
  /** Default 2 000 ms. */
  pollMs?: number;
  /** Blocks per log query. Default 5 000. */
  logChunk?: bigint;
  now?: () => number;
  logger?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export interface ForcedWithdrawalTask extends PeriodicTask {
  /** One round now: answers what it sent or settled. */
  runOnce(): Promise<void>;
}

interface OpenRequest {
  account: Address;
  amount: bigint;
  requestedAt: bigint;
}

export function createForcedWithdrawalTask(opts: ForcedWithdrawalTaskOptions): ForcedWithdrawalTask {
  const { publicClient, sender, marginVault: vault } = opts;
  const now = opts.now ?? venueChainNow;
  const log = opts.logger;
  const chunk = opts.logChunk ?? 5_000n;
  const watched = new Set<Address>();
  let cursor = opts.fromBlock;

  const revertName = (err: unknown): string | undefined => {
    const e = toChainError(err);
    return e instanceof ChainRevertError ? e.errorName : undefined;
  };

  /** Sends `data` to the vault after a simulation; answers the revert's name when it would revert. */
  const send = async (data: Hex): Promise<string | undefined> => {
    let gas: bigint;
    try {
      gas = await publicClient.estimateGas({ account: sender.address, to: vault, data });
    } catch (err) {
      const name = revertName(err);
      if (name === undefined) throw toChainError(err);
      return name;
    }
    const receipt = await sender.send({ to: vault, data, gas: (gas * 13n) / 10n });
    return receipt.status === 'success' ? undefined : 'reverted';
  };

  const follow = async (): Promise<void> => {
    const head = await publicClient.getBlockNumber();
    while (cursor <= head) {
      const to = cursor + chunk - 1n < head ? cursor + chunk - 1n : head;
      const logs = await publicClient.getContractEvents({ address: vault, abi: marginVaultAbi, eventName: 'ForcedWithdrawalRequested', fromBlock: cursor, toBlock: to });
      for (const l of logs) if (l.args.account) watched.add(l.args.account);
      cursor = to + 1n;
    }
  };

  const openOf = async (account: Address): Promise<OpenRequest | undefined> => {
    const [amount, requestedAt] = await publicClient.readContract({ address: vault, abi: marginVaultAbi, functionName: 'forcedWithdrawal', args: [account] });
    return requestedAt === 0n ? undefined : { account, amount, requestedAt };
  };

  const settle = async (id: Hex, outcome: 'PAID' | 'FAILED'): Promise<void> => {
    const r = await opts.gateway.submit({ kind: 'settleWithdrawal', id: `${SETTLE_PREFIX}${id}`, ts: now(), withdrawalId: id, outcome });
    if (!r.ok && r.code !== 'WITHDRAWAL_NOT_PENDING') throw new Error(`perp forced withdrawals: the engine refused to settle ${id}: ${r.code}`);
  };

  const pay = async (req: OpenRequest, id: Hex): Promise<void> => {
    const refused = await send(encodeFunctionData({ abi: marginVaultAbi, functionName: 'payForcedWithdrawal', args: [req.account, id] }));
    if (refused === undefined) {
      await settle(id, 'PAID');
      log?.info({ account: req.account, amount: req.amount.toString(), withdrawalId: id }, 'perp forced withdrawals: paid');
    } else if (refused === 'WithdrawalAlreadyPaid') {
      await settle(id, 'PAID');
    } else if (WAITS.has(refused)) {
      log?.warn({ account: req.account, reason: refused }, 'perp forced withdrawals: payment waits');
    } else {
      log?.error({ account: req.account, reason: refused }, 'perp forced withdrawals: payment refused by the vault');
    }
  };

  /** Shows the vault the account holds less than it asked, from a root posted after the request. */
  const reject = async (req: OpenRequest, why: string): Promise<void> => {
    const registry = await publicClient.readContract({ address: vault, abi: marginVaultAbi, functionName: 'reserveRegistry' });
    const postedAt = await publicClient.readContract({ address: registry, abi: reserveRegistryAbi, functionName: 'lastPostedAt' });
    const latest = await publicClient.readContract({ address: registry, abi: reserveRegistryAbi, functionName: 'latest' });
    const proof = postedAt >= req.requestedAt ? await accountProof(opts.db, req.account).catch(() => undefined) : undefined;
    if (proof === undefined || BigInt(proof.epoch) !== latest.epoch || proof.deposited === null || proof.withdrawn === null) {
      log?.info({ account: req.account, why }, 'perp forced withdrawals: refused by the engine; waiting for a root posted after the request to reject it');
      return;
    }
    const leaf = {
      salt: proof.salt as Hex, account: req.account, equity: BigInt(proof.equity), pendingWithdrawals: BigInt(proof.pendingWithdrawals),
      deposited: BigInt(proof.deposited), withdrawn: BigInt(proof.withdrawn),
    };
    const path = proof.path.map((s) => ({ hash: s.hash as Hex, sum: BigInt(s.sum), left: s.side === 'left' }));
    const refused = await send(encodeFunctionData({ abi: marginVaultAbi, functionName: 'rejectForcedWithdrawal', args: [req.account, { leaf, path }] }));
    if (refused === undefined) log?.info({ account: req.account, amount: req.amount.toString(), epoch: proof.epoch }, 'perp forced withdrawals: rejected with the account\'s leaf (it holds less than it asked)');
    else log?.warn({ account: req.account, reason: refused }, 'perp forced withdrawals: rejection refused by the vault; tried again next round');
  };

  const answer = async (req: OpenRequest): Promise<void> => {
    const id = forcedWithdrawalIdOf(req.account, req.requestedAt);
    const engine = opts.engine();
    let w = engine.withdrawal(id);
    if (w === undefined || w.status === 'FAILED') {
      // A refused command id is refused for ever: one attempt a minute, each under its own id.
      const r = await opts.gateway.submit({
        kind: 'requestWithdrawal', id: `${REQUEST_PREFIX}${id}:${Math.floor(now() / 60_000)}`, ts: now(), account: req.account, withdrawalId: id, amount: req.amount, forced: true,
      });
      if (!r.ok) return reject(req, r.code);
      w = engine.withdrawal(id);
    }
    if (w?.status === 'PENDING') await pay(req, id);
  };

  const runOnce = async (): Promise<void> => {
    await follow();
    const open = new Map<string, OpenRequest>();
    for (const account of [...watched]) {
      const req = await openOf(account);
      if (req === undefined) watched.delete(account);
      else open.set(forcedWithdrawalIdOf(account, req.requestedAt), req);
    }
    // Reservations whose request left the vault unpaid (cancelled by the account, or rejected) are released.
    for (const w of opts.engine().pendingWithdrawals()) {
      if (!w.forced || open.has(w.withdrawalId)) continue;
      const paid = await publicClient.readContract({ address: vault, abi: marginVaultAbi, functionName: 'withdrawalPaid', args: [w.withdrawalId as Hex] });
      await settle(w.withdrawalId as Hex, paid ? 'PAID' : 'FAILED');
    }
    for (const req of open.values()) {
      try {
        await answer(req);
      } catch (err) {
        log?.warn({ account: req.account, err: toChainError(err).message }, 'perp forced withdrawals: not answered this round; retrying');
      }
    }
  };

  const task = periodic(opts.pollMs ?? 2_000, runOnce, (err) => log?.warn({ err: toChainError(err).message }, 'perp forced withdrawals: round failed; retrying'));
  return { ...task, runOnce };
}
