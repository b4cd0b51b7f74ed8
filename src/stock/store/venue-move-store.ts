/**
 * The database side of a venue's move to new contracts (docs/upgrades.md, "Deployments from before
 * the proxies"): every row that names a stock token by address is restated onto the token that
 * replaced it, in one transaction, so that orders, operations, positions and corporate actions read
 * under the same symbols as before. Idempotent: a second run finds no old address left.
 */
import { sql } from 'kysely';
import { withTransaction } from '../../storage/transaction.ts';
import { kyselyOf, type Db } from '../../storage/database.ts';

/** Tables whose `stock_address` names a stock token. */
const STOCK_ADDRESS_TABLES = ['stock_orders', 'stock_operations', 'stock_positions', 'corporate_actions', 'dividend_payouts'] as const;

/**
 * Restates `moved` (old address, lower case → new address) in every table that names a stock token.
 * Answers the rows changed per table.
 */
export async function restateStockAddresses(db: Db, moved: Readonly<Record<string, string>>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  await withTransaction(db, async (tx) => {
    for (const table of STOCK_ADDRESS_TABLES) {
      counts[table] = 0;
      for (const [from, to] of Object.entries(moved)) {
        // Raw SQL: the corporate-action tables are typed by their own store, not the shared schema.
        const result = await sql`update ${sql.table(table)} set stock_address = ${to.toLowerCase()} where stock_address = ${from.toLowerCase()}`.execute(kyselyOf(tx));
        counts[table] += Number(result.numAffectedRows ?? 0n);
      }
    }
  });
  return counts;
}
