/**
 * Used nonces of signed perpetual orders (migration 0010): each nonce is usable once per account,
 * shared by every API instance through the database. The row keeps the hash of the order that used
 * it, so the same signed order sent again (a client retry after a lost answer) is recognised and
 * answered as the first, while another order with that nonce is refused.
 */
import { kyselyOf, type DbExecutor } from '../../storage/database.ts';
import { isUniqueViolation } from '../../storage/storage-errors.ts';

export type NonceClaim = 'claimed' | 'same-order' | 'used';

/**
 * Records `nonce` as used by `account` for the order `orderHash`. Answers `claimed` the first time,
 * `same-order` when that very order claimed it before, `used` when another order did. Rows whose
 * expiry is older than `pruneBeforeMs` are deleted on the way (their orders are refused as expired).
 */
export async function claimOrderNonce(
  db: DbExecutor,
  rec: { account: string; nonce: string; orderHash: string; expiry: number; usedAt: number; pruneBeforeMs?: number },
): Promise<NonceClaim> {
  const k = kyselyOf(db);
  const account = rec.account.toLowerCase();
  if (rec.pruneBeforeMs !== undefined) await k.deleteFrom('perp_order_nonces').where('expiry', '<', rec.pruneBeforeMs).execute();
  try {
    await k
      .insertInto('perp_order_nonces')
      .values({ account, nonce: rec.nonce, order_hash: rec.orderHash.toLowerCase(), expiry: rec.expiry, used_at: rec.usedAt })
      .execute();
    return 'claimed';
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
  }
  const row = await k
    .selectFrom('perp_order_nonces')
    .select('order_hash')
    .where('account', '=', account)
    .where('nonce', '=', rec.nonce)
    .executeTakeFirst();
  return row?.order_hash === rec.orderHash.toLowerCase() ? 'same-order' : 'used';
}
