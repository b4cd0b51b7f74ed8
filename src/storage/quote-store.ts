import type { Selectable } from 'kysely';
import { kyselyOf, type DbExecutor } from './database.ts';
import type { QuotesTable } from './schema.ts';
import { withTransaction } from './transaction.ts';

// 6 columns per row; 1000 rows stays far under both engines' bound-parameter limits.
const CHUNK_ROWS = 1_000;

/** A symbol's latest stored quote: prices are decimal strings, timestamp is ms since the epoch. */
export interface QuoteRecord {
  symbol: string;
  bid: string;
  ask: string;
  last: string;
  timestamp: number;
  /**
   * The stock's share multiplier the prices are stated in (decimal string, src/marketdata/price-splits.ts);
   * absent for a stock that never split (1e18).
   */
  multiplier?: string;
}

function fromRow(row: Selectable<QuotesTable>): QuoteRecord {
  const q: QuoteRecord = { symbol: row.symbol, bid: row.bid, ask: row.ask, last: row.last, timestamp: Number(row.timestamp) };
  if (row.multiplier !== null) q.multiplier = row.multiplier;
  return q;
}

/** Inserts or replaces each symbol's quote (last write wins; a later entry for a symbol beats an earlier one). */
export async function upsertQuotes(db: DbExecutor, quotes: readonly QuoteRecord[]): Promise<void> {
  // PostgreSQL refuses to update one row twice in a statement: keep the last quote per symbol.
  const unique = [...new Map(quotes.map((q) => [q.symbol, q])).values()];
  if (unique.length === 0) return;
  await withTransaction(db, async (tx) => {
    for (let i = 0; i < unique.length; i += CHUNK_ROWS) {
      const rows = unique.slice(i, i + CHUNK_ROWS).map((q) => ({
        symbol: q.symbol,
        bid: q.bid,
        ask: q.ask,
        last: q.last,
        timestamp: q.timestamp,
        multiplier: q.multiplier ?? null,
      }));
      await tx
        .insertInto('quotes')
        .values(rows)
        .onConflict((oc) =>
          oc.column('symbol').doUpdateSet((eb) => ({
            bid: eb.ref('excluded.bid'),
            ask: eb.ref('excluded.ask'),
            last: eb.ref('excluded.last'),
            timestamp: eb.ref('excluded.timestamp'),
            multiplier: eb.ref('excluded.multiplier'),
          })),
        )
        .execute();
    }
  });
}

/** Every stored quote, by symbol. */
export async function listQuotes(db: DbExecutor): Promise<QuoteRecord[]> {
  const rows = await kyselyOf(db).selectFrom('quotes').selectAll().orderBy('symbol').execute();
  return rows.map(fromRow);
}

export async function getQuote(db: DbExecutor, symbol: string): Promise<QuoteRecord | undefined> {
  const row = await kyselyOf(db).selectFrom('quotes').selectAll().where('symbol', '=', symbol).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}
