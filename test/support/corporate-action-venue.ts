/**
 * What the corporate-action suites on anvil share: days counted in milliseconds from the test's clock,
 * and the registry of the fixture's venue.
 */
import type { CorporateAction } from '../../src/marketdata/corporate-actions.ts';
import { newYorkDate } from '../../src/marketdata/corporate-actions.ts';
import type { DbExecutor } from '../../src/storage/database.ts';
import { createCorporateActionRegistry, type CorporateActionRegistry } from '../../src/stock/corporate-actions/corporate-action-registry.ts';
import type { ChainFixture } from './chain-fixture.ts';

export const DAY = 86_400_000;

/** The registry of the fixture's venue: its stocks and cash token, file actions before its deployment day predating it. */
export function venueRegistry(
  f: ChainFixture,
  db: DbExecutor,
  opts: { fileActions: readonly CorporateAction[]; symbols: readonly string[]; now: () => number },
): CorporateActionRegistry {
  const { stocks, cashToken } = f.deployment.contracts;
  return createCorporateActionRegistry({ db, ...opts, stocks, cashToken, venueStartDate: newYorkDate(f.deployment.deployedAt) });
}
