import type { Kysely } from 'kysely';

/**
 * A stock key holds a list of scopes `(chainId, productType, access)` (issue 39,
 * docs/api-keys-secrets.md "Stock key scopes"), stored as a JSON array in `scopes`; a perp key
 * holds none (`[]`). Every existing stock key gets the one scope of its chain, product and
 * permission, so it authenticates exactly as before. `chain_id`, `product` and `permissions` stay
 * and keep mirroring the first scope, which is what lets `down` keep each key's first scope.
 *
 * The rows are rewritten one by one from JavaScript rather than by one UPDATE: the JSON must quote
 * the product as JSON quotes it, which string concatenation in SQL would do differently on the two
 * engines. Key tables are small (one row per key), and the rows are read in pages of PAGE.
 */
const PAGE = 500;

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('scopes', 'text', (c) => c.notNull().defaultTo('[]')).execute();
  let after: string | undefined;
  for (;;) {
    let q = db.selectFrom('api_keys').select(['api_key', 'chain_id', 'product', 'permissions']).where('api', '=', 'stock');
    if (after !== undefined) q = q.where('api_key', '>', after);
    const rows = (await q.orderBy('api_key').limit(PAGE).execute()) as Array<{ api_key: string; chain_id: number | string; product: string; permissions: string }>;
    for (const row of rows) {
      // A stock row holds exactly one permission (0004, src/auth/api-key-model.ts).
      const [access] = JSON.parse(row.permissions) as string[];
      const scopes = JSON.stringify([{ chainId: Number(row.chain_id), productType: row.product, access }]);
      await db.updateTable('api_keys').set({ scopes }).where('api_key', '=', row.api_key).execute();
    }
    if (rows.length < PAGE) break;
    after = rows[rows.length - 1]!.api_key;
  }
}

/** Back to one scope per key: each stock key keeps its first scope (its chain_id, product, permissions). */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('scopes').execute();
}
