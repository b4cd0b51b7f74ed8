/**
 * One-Click Trade on the perpetual API (contract.md §B, docs/perp-api.md "One-Click Trade"): the
 * wallet authorises a session signer (a key the trading program holds) to sign its orders until an
 * expiry, so that the wallet itself signs once instead of once per order.
 *
 * `prepare` answers complete EIP-712 typed data in the venue's domain (the orders' `TokexPerp`
 * domain: chain id, margin vault) with primary type `EnableSession(address account,address
 * session,uint64 expiresAt,uint64 nonce)`, the account being the key's wallet; `enable` takes the
 * message back with the wallet's signature, rebuilds domain and types, and registers the session
 * (session-signer-store.ts has the rules that keep old signed orders from reviving); `disable`
 * revokes it. Orders signed by the active session key are accepted for that account only
 * (`assertSessionSigner`, called by the order path when the signer is not the wallet).
 *
 * A session key signs orders and nothing else: it is not the wallet, so it cannot create API keys
 * (that needs the wallet's own signature), and withdrawals and liquidity calls take no order
 * signature at all (the API key with TRANSFER authorises them).
 */
import { ENABLE_SESSION_FIELDS } from '@tokex/contract';
import { randomBytes } from 'node:crypto';
import type { OneClickStatus } from '@tokex/contract';
import { getAddress, keccak256, toBytes, zeroAddress, type Address } from 'viem';
import { ConflictError, ForbiddenError, RejectedError, ValidationError } from '../errors/app-error.ts';
import type { AuthKey } from '../auth/api-key-service.ts';
import { defineTypedData, type CompleteTypedData, type TypedDataDomain } from '../chain/typed-data.ts';
import type { Db, DbExecutor } from '../storage/database.ts';
import { disableSession, enableSession, getSession, sessionActive, type SessionRecord } from './store/session-signer-store.ts';
import { venueNow } from '../lib/venue-clock.ts';

/** The furthest ahead a session's expiry may be. */
export const MAX_SESSION_TTL_MS = 30 * 24 * 60 * 60_000;

export const enableSessionType = defineTypedData({
  primaryType: 'EnableSession',
  types: {
    EnableSession: ENABLE_SESSION_FIELDS,
  },
});

export interface EnableSessionMessage {
  account: Address;
  session: Address;
  /** Milliseconds since the epoch. */
  expiresAt: bigint;
  nonce: bigint;
}

/**
 * The venue's own delegate (docs/perp-api.md "Monday Trade clients"): the session address a wallet
 * enables so that orders authorised by its API key alone (HMAC, no order signature) are accepted
 * for it. An address derived from a hash, whose private key nobody holds, the venue included: no
 * order can be signed by it, so it authorises exactly the venue's HMAC-only order path and nothing
 * else, until the expiry the wallet signed or a disable. One per chain and margin vault.
 */
export function venueDelegateAddress(domain: TypedDataDomain): Address {
  const seed = `TokexPerp venue delegate|${domain.chainId}|${String(domain.verifyingContract).toLowerCase()}`;
  return getAddress(`0x${keccak256(toBytes(seed)).slice(-40)}`);
}

/** `one-click/prepare`'s body: a session key's address, or the venue's own delegate. */
export type PrepareOneClickInput = { sessionAddress: string; expiresAt: number } | { delegate: 'venue'; expiresAt: number };

export interface OneClickService {
  /** The venue's own delegate's address (venueDelegateAddress). */
  readonly venueDelegate: Address;
  prepare(caller: AuthKey, input: PrepareOneClickInput): { typedData: CompleteTypedData<'EnableSession'> };
  enable(caller: AuthKey, body: { message: unknown; signature: unknown }): Promise<OneClickStatus>;
  status(caller: AuthKey): Promise<OneClickStatus>;
  disable(caller: AuthKey): Promise<OneClickStatus>;
}

/** The wallet a key acts for (keys a wallet creates are bound to it). */
function walletOfKey(caller: AuthKey): string {
  if (caller.userAddress === null) throw new ForbiddenError('this API key is bound to no wallet, so it cannot use One-Click Trade');
  return caller.userAddress.toLowerCase();
}

function statusOf(s: SessionRecord | undefined, now: number): OneClickStatus {
  if (!s) return { enabled: false, sessionAddress: null, expiresAt: null, enabledAt: null };
  return { enabled: sessionActive(s, now), sessionAddress: getAddress(s.sessionAddress), expiresAt: s.expiresAt, enabledAt: s.enabledAt };
}

function checkSession(session: string, wallet: string, field: string): void {
  const s = session.toLowerCase();
  if (s === zeroAddress) throw new ValidationError(field, 'must not be the zero address');
  if (s === wallet) throw new ValidationError(field, 'must be another key than the wallet itself');
}

function checkExpiry(expiresAt: bigint, now: number, field: string): void {
  if (expiresAt <= BigInt(now)) throw new ValidationError(field, 'must be a time in ms in the future');
  if (expiresAt > BigInt(now + MAX_SESSION_TTL_MS)) throw new ValidationError(field, 'must be at most 30 days ahead');
}

/**
 * The order path's check when an order is not signed by the account's wallet: `signer` must be the
 * account's session signer, enabled and not expired at `now` (51015 when it is the account's last
 * session but that has been disabled or has expired; 51014 for any other signer), and the order's
 * expiry must not be after the session's (10000 `message.expiry`). One read by primary key.
 */
export async function assertSessionSigner(db: DbExecutor, q: { account: string; signer: string; orderExpiry: bigint; now: number }): Promise<void> {
  const s = await getSession(db, q.account);
  if (!s || s.sessionAddress !== q.signer.toLowerCase()) {
    throw new RejectedError('BAD_ORDER_SIGNATURE', 'the order is not signed by the wallet of the API key or its enabled session signer');
  }
  if (!sessionActive(s, q.now)) throw new RejectedError('ONE_CLICK_NOT_ENABLED', 'the session signer is no longer enabled (disabled or expired): sign with the wallet or enable a session again');
  if (q.orderExpiry > BigInt(s.expiresAt)) throw new ValidationError('message.expiry', "must not be after the session signer's expiresAt");
}

export function createOneClickService(opts: { db: Db; domain: TypedDataDomain; now?: () => number }): OneClickService {
  const { db, domain } = opts;
  const now = opts.now ?? venueNow;

  const venueDelegate = venueDelegateAddress(domain);

  return {
    venueDelegate,
    prepare(caller, input) {
      const wallet = walletOfKey(caller);
      const t = now();
      const sessionAddress = 'delegate' in input ? venueDelegate : input.sessionAddress;
      checkSession(sessionAddress, wallet, 'sessionAddress');
      if (!Number.isSafeInteger(input.expiresAt)) throw new ValidationError('expiresAt', 'must be a time in ms');
      checkExpiry(BigInt(input.expiresAt), t, 'expiresAt');
      const message = {
        account: wallet,
        session: sessionAddress,
        expiresAt: BigInt(input.expiresAt),
        // 63 random bits, as the order nonces.
        nonce: BigInt(`0x${randomBytes(8).toString('hex')}`) >> 1n,
      };
      return { typedData: enableSessionType.build(domain, message) };
    },

    async enable(caller, body) {
      const wallet = walletOfKey(caller);
      const m = enableSessionType.parseMessage(body.message) as unknown as EnableSessionMessage;
      if (m.account.toLowerCase() !== wallet) throw new ValidationError('message.account', 'must be the wallet of the API key');
      checkSession(m.session, wallet, 'message.session');
      const t = now();
      checkExpiry(m.expiresAt, t, 'message.expiresAt');
      // The wallet and no one else: another wallet, a session key (this account's or any), or any
      // altered field recovers another address.
      await enableSessionType.verifySigner(domain, m as unknown as Record<string, unknown>, body.signature, m.account, 'message.account');
      const r = await enableSession(db, { account: wallet, sessionAddress: m.session, expiresAt: Number(m.expiresAt), nonce: m.nonce.toString(), now: t, reusable: m.session.toLowerCase() === venueDelegate.toLowerCase() });
      if (!r.ok) {
        switch (r.reason) {
          case 'nonce-used':
            throw new ConflictError('message.nonce: this signed enablement was already used; prepare a new one');
          case 'shortens':
            throw new ConflictError(`message.expiresAt: the active session can only be extended (it is enabled until ${r.current}); disable it and enable another session address`);
          case 'blocked':
            throw new ConflictError(`message.session: this address was disabled or replaced before its expiry and cannot be enabled again until ${r.until} has passed; use a new session address`);
        }
      }
      return statusOf(r.session, t);
    },

    async status(caller) {
      const wallet = walletOfKey(caller);
      return statusOf(await getSession(db, wallet), now());
    },

    async disable(caller) {
      const wallet = walletOfKey(caller);
      const t = now();
      return statusOf(await disableSession(db, wallet, t), t);
    },
  };
}
