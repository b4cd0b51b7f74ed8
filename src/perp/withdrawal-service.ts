/**
 * Withdrawals of collateral (docs/perp-api.md "Withdrawals", docs/perp-risk.md "Withdrawals"):
 * `POST account/withdrawals {amount, clientWithdrawalId}` reserves the amount in the engine, and the
 * perp engine's withdrawal task (workers/withdrawal-task.ts) pays it from the MarginVault to the
 * account's own wallet.
 *
 * - The withdrawal id is `keccak256(abi.encode("tokex.perp.withdrawal", account, clientWithdrawalId))`,
 *   a bytes32 the vault takes as is: one client id of one account is one withdrawal, on every API
 *   instance, after any restart, and the vault pays it at most once.
 * - The engine's `requestWithdrawal` is the only place the amount is checked (withdrawable, the
 *   bad-debt pause) and reserved, one command after another: two requests racing for one balance
 *   cannot both take it. Its command id is `withdrawal:<withdrawalId>:<amount micro-USD>`, so a
 *   retry after an unknown outcome (50002) is answered from the journal.
 * - A refused request reserves nothing and leaves the client id free: a later request with the same
 *   id is judged again (under `…:<n>`, the next attempt id the journal has not seen, since the
 *   journal answers an id it refused with that refusal for ever).
 * - The same client id again answers the withdrawal as it stands (`duplicate: true`); with another
 *   amount it is 51021 WITHDRAWAL_EXISTS.
 * - The payee is the key's bound wallet, never a body field: the engine account is that wallet, and
 *   the task pays the engine's account.
 * - The vault pays only against the wallet's own EIP-712 `Withdrawal` signature (docs/security.md):
 *   `account/withdrawals/build` answers the typed data (amount in collateral units, the withdrawal
 *   id, a deadline in unix seconds), and the request carries its signature, checked here before
 *   anything is reserved (a One-Click session key's is refused: a leaked session key trades, it
 *   never withdraws) and kept on the row for the payment task. A retry under the same client id
 *   answers the withdrawal as it stands without looking at the signature again.
 *
 * The row in `perp_withdrawals` (store/withdrawal-store.ts) is written in two steps around the
 * engine: a REQUESTED note first (it carries the client id, which the engine does not keep), then
 * PENDING once reserved. A crash between the reservation and the second step leaves the note (or
 * nothing): the task makes the row PENDING from the engine's reservation, and a retry of the request
 * answers it.
 */
import {
  MAX_CLIENT_WITHDRAWAL_ID,
  WITHDRAWAL_DEADLINE_DEFAULT_S,
  WITHDRAWAL_DEADLINE_MAX_S,
  WITHDRAWAL_DEADLINE_MIN_LEFT_S,
  WITHDRAWAL_DEADLINE_MIN_S,
  WITHDRAWAL_FIELDS,
  type Page,
  type PerpWithdrawal,
  type RequestedWithdrawal,
} from '@tokex/contract';
import { encodeAbiParameters, getAddress, keccak256, type Address } from 'viem';
import { defineTypedData, parseSignature, type CompleteTypedData, type TypedDataDomain } from '../chain/typed-data.ts';
import { AppError, ValidationError } from '../errors/app-error.ts';
import type { AuthKey } from '../auth/api-key-service.ts';
import { parseDecimal } from '../lib/decimal.ts';
import type { Db } from '../storage/database.ts';
import { COLLATERAL_DECIMALS } from './engine/instruments.ts';
import type { RequestWithdrawalCommand, WithdrawalAccepted } from './engine/engine-types.ts';
import { engineError, walletOf } from './venue-calls.ts';
import type { PerpVenue } from './perp-venue.ts';
import { usd } from './perp-views.ts';
import type { SequencedResult } from './sequencer/engine-sequencer.ts';
import { findJournalByCommandIds } from './store/engine-journal-store.ts';
import {
  deleteWithdrawalIntent,
  getWithdrawal,
  insertWithdrawalIntent,
  listWithdrawalsPage,
  recordWithdrawalReserved,
  type WithdrawalRecord,
  type WithdrawalStatus,
} from './store/withdrawal-store.ts';

export { MAX_CLIENT_WITHDRAWAL_ID };

/** The request the wallet signs and the margin vault checks (IMarginVault.WithdrawalRequest). */
export const withdrawalType = defineTypedData({ primaryType: 'Withdrawal', types: { Withdrawal: WITHDRAWAL_FIELDS } });
const CLIENT_WITHDRAWAL_ID = new RegExp(`^[!-~]{1,${MAX_CLIENT_WITHDRAWAL_ID}}$`);
/** The engine's per-command ceiling (10^30 micro-USD): beyond it nothing could be reserved anyway. */
const MAX_AMOUNT = 10n ** 30n;
/** Domain tag of the withdrawal id, so that no other hash of an address and a string collides with it. */
export const WITHDRAWAL_ID_TAG = 'tokex.perp.withdrawal';
/** Engine command ids of the requests: `withdrawal:<withdrawalId>:<amount>[:<attempt>]`. */
export const WITHDRAWAL_COMMAND_PREFIX = 'withdrawal:';
const ATTEMPT_PAGE = 32;

/** The vault's bytes32 id of `account`'s withdrawal `clientWithdrawalId` (lower-case 0x hex). */
export function withdrawalIdOf(account: string, clientWithdrawalId: string): `0x${string}` {
  return keccak256(
    encodeAbiParameters([{ type: 'string' }, { type: 'address' }, { type: 'string' }], [WITHDRAWAL_ID_TAG, account.toLowerCase() as `0x${string}`, clientWithdrawalId]),
  );
}

/** The store's text columns of ids, wallets and transactions: the 0x hex this service wrote there. */
const hex = (text: string) => text as `0x${string}`;

/** A withdrawal as the API answers it. */
export function withdrawalBody(r: WithdrawalRecord): PerpWithdrawal {
  return {
    withdrawalId: hex(r.withdrawalId),
    clientWithdrawalId: r.clientWithdrawalId,
    address: hex(r.account),
    asset: 'USDC',
    amount: usd(r.amount),
    // A REQUESTED note is never answered; were it read here, it is not reserved yet.
    status: r.status === 'REQUESTED' ? 'PENDING' : r.status,
    txHash: r.txHash === null ? null : hex(r.txHash),
    blockNumber: r.blockNumber === null ? null : String(r.blockNumber),
    reason: r.reason,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export interface WithdrawalListQuery {
  offset: number;
  limit: number;
  status?: WithdrawalStatus;
  startTime?: number;
  endTime?: number;
}

export interface WithdrawalInput {
  amount: string;
  clientWithdrawalId: string;
}

export interface WithdrawalService {
  /** The typed data the wallet signs for `amount` under `clientWithdrawalId` (nothing is stored). */
  build(caller: AuthKey, input: WithdrawalInput & { deadline?: number }): { typedData: CompleteTypedData<'Withdrawal'>; withdrawalId: `0x${string}` };
  /**
   * Reserves and queues the payment of `amount` to the key's wallet against the wallet's signature
   * of the built request; the same client id answers the original.
   */
  request(caller: AuthKey, input: WithdrawalInput & { deadline: number; signature: string }): Promise<RequestedWithdrawal>;
  /** The account's withdrawals, newest first. */
  list(caller: AuthKey, q: WithdrawalListQuery): Promise<Page<PerpWithdrawal>>;
}

function unknownOutcome(err: unknown): unknown {
  if (err instanceof AppError && err.code !== 'STORAGE_UNAVAILABLE') return err;
  return new AppError('STORAGE_UNAVAILABLE', err instanceof AppError ? err.message : 'perp engine: no answer, the withdrawal may or may not be reserved', {
    retryable: true,
    cause: err,
    data: { outcome: 'unknown', retry: 'send the same request again with the same clientWithdrawalId: it is reserved and paid at most once' },
  });
}

export function createWithdrawalService(opts: { db: Db; venue: PerpVenue; domain: TypedDataDomain; now?: () => number }): WithdrawalService {
  const { db, venue, domain } = opts;
  const now = opts.now ?? Date.now;

  const parseInput = (caller: AuthKey, input: WithdrawalInput) => {
    const account = walletOf(caller);
    const amount = parseDecimal(input.amount, { field: 'amount', decimals: COLLATERAL_DECIMALS });
    if (amount <= 0n) throw new ValidationError('amount', 'must be greater than 0');
    if (amount > MAX_AMOUNT) throw new ValidationError('amount', 'is too large');
    const clientWithdrawalId = input.clientWithdrawalId;
    if (typeof clientWithdrawalId !== 'string' || !CLIENT_WITHDRAWAL_ID.test(clientWithdrawalId)) {
      throw new ValidationError('clientWithdrawalId', `must be 1 to ${MAX_CLIENT_WITHDRAWAL_ID} visible ASCII characters`);
    }
    return { account, amount, clientWithdrawalId, withdrawalId: withdrawalIdOf(account, clientWithdrawalId) };
  };

  /** The message the vault checks; the recipient is the account's own wallet (the API pays nobody else). */
  const messageOf = (account: string, amount: bigint, withdrawalId: `0x${string}`, deadline: number) => {
    const wallet = getAddress(account) as Address;
    return { account: wallet, recipient: wallet, amount, withdrawalId, deadline: BigInt(deadline) };
  };

  const checkDeadline = (deadline: unknown, minLeft: number): number => {
    const nowS = Math.floor(now() / 1000);
    if (typeof deadline !== 'number' || !Number.isSafeInteger(deadline)) throw new ValidationError('deadline', 'must be a time in unix seconds');
    if (deadline < nowS + minLeft) throw new ValidationError('deadline', `must be at least ${minLeft} s ahead`);
    if (deadline > nowS + WITHDRAWAL_DEADLINE_MAX_S) throw new ValidationError('deadline', `must be at most ${WITHDRAWAL_DEADLINE_MAX_S} s ahead`);
    return deadline;
  };

  const exists = (row: WithdrawalRecord, amount: bigint) => {
    if (row.amount !== amount) {
      throw engineError({ code: 'WITHDRAWAL_EXISTS', message: `clientWithdrawalId used for ${usd(row.amount)}, asked ${usd(amount)}` });
    }
    return { ...withdrawalBody(row), duplicate: true };
  };

  /** The first attempt id of this request the journal has not seen (each seen one was refused). */
  const firstFreeAttempt = async (idOf: (n: number) => string): Promise<number> => {
    for (let from = 0; ; from += ATTEMPT_PAGE) {
      const ids = Array.from({ length: ATTEMPT_PAGE }, (_, i) => idOf(from + i));
      const used = new Set((await findJournalByCommandIds(db, ids)).map((r) => r.commandId));
      const free = ids.findIndex((id) => !used.has(id));
      if (free >= 0) return from + free;
    }
  };

  const submit = async (cmd: RequestWithdrawalCommand): Promise<SequencedResult> => {
    let r: SequencedResult;
    try {
      r = await venue.gateway.submit(cmd);
    } catch (err) {
      throw unknownOutcome(err);
    }
    await venue.caughtUp?.(r.journalSeq);
    return r;
  };

  return {
    build(caller, input) {
      const { account, amount, withdrawalId } = parseInput(caller, input);
      const deadline =
        input.deadline === undefined ? Math.floor(now() / 1000) + WITHDRAWAL_DEADLINE_DEFAULT_S : checkDeadline(input.deadline, WITHDRAWAL_DEADLINE_MIN_S);
      return { typedData: withdrawalType.build(domain, messageOf(account, amount, withdrawalId, deadline)), withdrawalId };
    },

    async request(caller, input) {
      const { account, amount, clientWithdrawalId, withdrawalId } = parseInput(caller, input);
      const reserved = (amt: bigint, createdAt: number) => recordWithdrawalReserved(db, { withdrawalId, account, clientWithdrawalId, amount: amt, createdAt }, now());

      // Asked before: the withdrawal as it stands.
      const row = await getWithdrawal(db, withdrawalId);
      if (row !== undefined && row.status !== 'REQUESTED') {
        const answer = exists(row, amount);
        return row.clientWithdrawalId === null ? { ...withdrawalBody(await reserved(row.amount, row.createdAt)), duplicate: true } : answer;
      }
      const known = venue.engine().withdrawal(withdrawalId);
      if (known !== undefined) return exists(await reserved(known.amount, known.requestedTs), amount);

      // New: the wallet's own signature of exactly this request, or nothing is reserved.
      const deadline = checkDeadline(input.deadline, WITHDRAWAL_DEADLINE_MIN_LEFT_S);
      const signature = parseSignature(input.signature);
      const message = messageOf(account, amount, withdrawalId, deadline);
      await withdrawalType.verifySigner(domain, message, signature, message.account, 'the wallet of the API key');
      const signed = { recipient: message.recipient, deadline, signature };

      const ts = now();
      await insertWithdrawalIntent(db, { withdrawalId, account, clientWithdrawalId, amount, createdAt: ts, signed }, ts);
      const base = `${WITHDRAWAL_COMMAND_PREFIX}${withdrawalId}:${amount}`;
      const idOf = (n: number) => (n === 0 ? base : `${base}:${n}`);
      let attempt = await firstFreeAttempt(idOf);
      let r: SequencedResult;
      for (;;) {
        r = await submit({ kind: 'requestWithdrawal', id: idOf(attempt), ts, account, withdrawalId, amount });
        // Refused under an id another request used meanwhile: that refusal was not this request's.
        if (!r.ok && r.resubmitted === true) {
          attempt++;
          continue;
        }
        break;
      }
      if (!r.ok) {
        if (venue.engine().withdrawal(withdrawalId) === undefined) await deleteWithdrawalIntent(db, withdrawalId);
        throw engineError(r, 'INSUFFICIENT_BALANCE');
      }
      const accepted = r as WithdrawalAccepted & SequencedResult;
      const w = venue.engine().withdrawal(withdrawalId);
      const record = await reserved(w?.amount ?? amount, w?.requestedTs ?? ts);
      if (accepted.duplicate && record.amount !== amount) return exists(record, amount);
      return { ...withdrawalBody(record), duplicate: accepted.duplicate || accepted.resubmitted === true };
    },

    async list(caller, q) {
      const account = walletOf(caller);
      const page = await listWithdrawalsPage(db, { account, ...q });
      return { total: page.total, rows: page.rows.map(withdrawalBody) };
    },
  };
}
