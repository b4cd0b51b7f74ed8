/**
 * Used nonces of wallet-signed API-key creations (migration 0009): the durable half of "a signed
 * creation cannot be used twice", shared by every API instance through the database.
 */
import { kyselyOf, type DbExecutor } from '../../storage/database.ts';
import { isUniqueViolation } from '../../storage/storage-errors.ts';

/**
 * Records `nonce` as used by `wallet`; false when it was used before. Rows whose expiry is older
 * than `pruneBeforeMs` are deleted on the way (their messages are refused as expired anyway).
 */
export async function claimKeyCreationNonce(
  db: DbExecutor,
  rec: { wallet: string; nonce: string; expiry: number; usedAt: number; pruneBeforeMs?: number },
): Promise<boolean> {
  const k = kyselyOf(db);
  if (rec.pruneBeforeMs !== undefined) await k.deleteFrom('perp_api_key_nonces').where('expiry', '<', rec.pruneBeforeMs).execute();
  try {
    await k
      .insertInto('perp_api_key_nonces')
      .values({ wallet: rec.wallet.toLowerCase(), nonce: rec.nonce, expiry: rec.expiry, used_at: rec.usedAt })
      .execute();
    return true;
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
}
