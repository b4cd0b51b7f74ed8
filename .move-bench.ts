import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from './src/storage/database.ts';
import { moveHistoryToOwnFile } from './src/perp/store/perp-history-file.ts';

const n = Number(process.argv[2] ?? 1_000_000);
const dir = mkdtempSync(path.join(os.tmpdir(), 'move-'));
const mainPath = path.join(dir, 'tokex.sqlite');
const historyPath = path.join(dir, 'perp-history.sqlite');
const main = await openDatabase({ sqlitePath: mainPath });
await sql`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${n})
  INSERT INTO perp_orders (order_id, account, symbol, side, type, time_in_force, price_ticks, size_lots, requested_size_lots, filled_lots, filled_notional, fee, status, reason, reduce_only, client_order_id, created_at, updated_at, liquidation)
  SELECT i, printf('0x%040x', i % 1000), 'BTC-USD', 'BUY', 'LIMIT', 'GTC', 20000, 10, 10, 10, '2000000', '400', 'FILLED', NULL, 0, NULL, i, i, 0 FROM c`.execute(main.kysely);
await sql`INSERT INTO meta (key, value) VALUES ('perp.projection.seq', ${String(n * 9)})`.execute(main.kysely);
const history = await openDatabase({ sqlitePath: historyPath });
const t0 = performance.now();
const r = await moveHistoryToOwnFile({ main, history, mainPath, historyPath, logger: { info: (o: object, m: string) => console.log(m, JSON.stringify(o)) } });
console.log(`${n} orders: moved in ${(performance.now() - t0).toFixed(0)} ms`, r);
await history.close();
await main.close();
rmSync(dir, { recursive: true, force: true });
