/**
 * The order nonce claims' shapes, shared by the nonce store (order-nonce-store.ts, which claims) and
 * the journal's store (engine-journal-store.ts, whose commits write the claims): apart from both so
 * that neither imports the other.
 */

/** `claimed` the first time, `same-order` when that very order claimed it before, `used` when another order did. */
export type NonceClaim = 'claimed' | 'same-order' | 'used';

export interface NonceClaimInput {
  account: string;
  nonce: string;
  orderHash: string;
  expiry: number;
  usedAt: number;
}

/** Claims of many requests written together: one transaction, so one commit, per batch. */
export interface OrderNonceClaimer {
  /** Records `nonce` as used by `account` for `orderHash`; answered once the batch holding the claim has committed. */
  claim(rec: NonceClaimInput): Promise<NonceClaim>;
}

/**
 * Claims the journal writes in its commits, for whoever made them (order-nonce-store.ts
 * `createJournalNonceLedger`): taken as a commit starts, then reported written or handed back.
 */
export interface JournalNonceWriter {
  take(): NonceClaimInput[];
  written(rows: readonly NonceClaimInput[]): void;
  restore(rows: readonly NonceClaimInput[]): void;
}
