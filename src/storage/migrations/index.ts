import type { Migration, MigrationProvider } from 'kysely';
import * as m0001 from './0001-initial.ts';
import * as m0002 from './0002-stock-indexer.ts';
import * as m0003 from './0003-events-by-position.ts';
import * as m0004 from './0004-api-keys.ts';
import * as m0005 from './0005-indexer-namespaces.ts';
import * as m0006 from './0006-stock-relay.ts';
import * as m0007 from './0007-perp-collateral.ts';
import * as m0008 from './0008-perp-journal.ts';
import * as m0009 from './0009-perp-api-key-nonces.ts';
import * as m0010 from './0010-perp-projections.ts';
import * as m0012 from './0012-perp-sessions.ts';
import * as m0013 from './0013-perp-withdrawals.ts';
import * as m0014 from './0014-perp-liquidity.ts';
import * as m0015 from './0015-perp-liquidation-history.ts';
import * as m0016 from './0016-perp-market-trades.ts';
import * as m0017 from './0017-perp-reserves.ts';
import * as m0018 from './0018-role-leases.ts';
import * as m0019 from './0019-stock-relay-idempotency.ts';
import * as m0020 from './0020-role-status.ts';
import * as m0021 from './0021-stock-order-reasons.ts';
import * as m0022 from './0022-perp-order-entry.ts';
import * as m0023 from './0023-corporate-actions.ts';
import * as m0024 from './0024-stock-order-multiplier.ts';
import * as m0025 from './0025-quote-multiplier.ts';
import * as m0026 from './0026-app-releases.ts';
import * as m0027 from './0027-perp-withdrawal-signatures.ts';
import * as m0028 from './0028-perp-reserve-leaf-flows.ts';
import * as m0029 from './0029-stock-key-scopes.ts';
import * as m0030 from './0030-perp-client-order-partial-index.ts';

/** Migrations by name, in the order they run (names sort lexically). */
export type MigrationList = ReadonlyArray<readonly [name: string, migration: Migration]>;

/**
 * Every migration, in order. To add one: create `NNNN-what.ts` exporting `up` (and `down`),
 * import it here and append it. Names sort lexically, so keep the four-digit prefix; never rename
 * or edit a migration that has shipped, add a new one instead.
 *
 * The pending migrations of a start run in one transaction on both engines (database.ts,
 * error-mapping-dialect.ts): all of them apply, or none. So a migration must not commit itself or
 * do what SQLite refuses inside a transaction (VACUUM; `PRAGMA foreign_keys` is ignored there).
 * A database that holds a migration this list does not know was written by a newer release and is
 * refused (database-version.ts).
 */
export const MIGRATIONS: MigrationList = [
  ['0001-initial', m0001],
  ['0002-stock-indexer', m0002],
  ['0003-events-by-position', m0003],
  ['0004-api-keys', m0004],
  ['0005-indexer-namespaces', m0005],
  ['0006-stock-relay', m0006],
  ['0007-perp-collateral', m0007],
  ['0008-perp-journal', m0008],
  ['0009-perp-api-key-nonces', m0009],
  ['0010-perp-projections', m0010],
  ['0012-perp-sessions', m0012],
  ['0013-perp-withdrawals', m0013],
  ['0014-perp-liquidity', m0014],
  ['0015-perp-liquidation-history', m0015],
  ['0016-perp-market-trades', m0016],
  ['0017-perp-reserves', m0017],
  ['0018-role-leases', m0018],
  ['0019-stock-relay-idempotency', m0019],
  ['0020-role-status', m0020],
  ['0021-stock-order-reasons', m0021],
  ['0022-perp-order-entry', m0022],
  ['0023-corporate-actions', m0023],
  ['0024-stock-order-multiplier', m0024],
  ['0025-quote-multiplier', m0025],
  ['0026-app-releases', m0026],
  ['0027-perp-withdrawal-signatures', m0027],
  ['0028-perp-reserve-leaf-flows', m0028],
  ['0029-stock-key-scopes', m0029],
  ['0030-perp-client-order-partial-index', m0030],
];

/** A static provider of `list`: no filesystem scanning, so it works the same from tsx, a bundle or tests. */
export function migrationProviderOf(list: MigrationList): MigrationProvider {
  return {
    async getMigrations() {
      return Object.fromEntries(list);
    },
  };
}

/** The provider of every migration. */
export const migrationProvider: MigrationProvider = migrationProviderOf(MIGRATIONS);
