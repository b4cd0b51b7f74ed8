/**
 * `tokex corporate-actions add|list|retry` (contract.md §0, docs/corporate-actions.md): schedules a
 * cash dividend or a split in the database the running stack uses (DATA_DIR / DATABASE_URL), lists
 * every action (the configuration file's and the added ones) with its state, and puts a failed one
 * back on the schedule. The executor applies it at its ex-date; a dividend added on its ex-date takes
 * effect at once, a split at the first minute at least 5 s later. Refusals name the field: an unlisted symbol, an ex-date in the past (New York's date), a
 * second action on a symbol's ex-date.
 */
import { Command } from 'commander';
import type { StockCorporateAction } from '@tokex/contract';
import { loadConfig, type AppConfig } from '../config/app-config.ts';
import fs from 'node:fs';
import { openAppDatabase } from '../app/storage-wiring.ts';
import { chainVenueConfig } from '../app/chain-venues.ts';
import { deploymentPath } from '../app/chain-wiring.ts';
import { stockDeploymentOf } from '../chain/deploy-contracts.ts';
import { readDeploymentRecord } from '../chain/deployment-file.ts';
import { ValidationError } from '../errors/app-error.ts';
import { loadCorporateActions } from '../marketdata/corporate-actions.ts';
import { DEMO_SYMBOLS } from '../marketdata/symbol-catalog.ts';
import { splitEffectiveAt } from '../marketdata/price-splits.ts';
import type { Db } from '../storage/database.ts';
import { createCorporateActionRegistry, venueStartDateOf, type AddCorporateActionInput, type CorporateActionRegistry } from '../stock/corporate-actions/corporate-action-registry.ts';
import { actionIdOf, rescheduleFailedAction, type CorporateActionRecord } from '../stock/corporate-actions/corporate-action-store.ts';
import { fields, print, table } from './cli-output.ts';

export interface AddOptions {
  symbol: string;
  exDate: string;
  dividend?: string;
  split?: string;
  recordDate?: string;
  currency?: string;
}

/** The command line's options as an action; exactly one of `--dividend` and `--split`. */
export function addInputOf(o: AddOptions): AddCorporateActionInput {
  if ((o.dividend === undefined) === (o.split === undefined)) throw new ValidationError('dividend', 'give exactly one of --dividend <amount> and --split <A:B>');
  return {
    symbol: String(o.symbol).toUpperCase(),
    type: o.dividend !== undefined ? 'DIVIDEND' : 'SPLIT',
    exDate: o.exDate,
    ...(o.recordDate !== undefined ? { recordDate: o.recordDate } : {}),
    ...(o.dividend !== undefined ? { amount: o.dividend } : { ratio: o.split }),
    ...(o.currency !== undefined ? { currency: o.currency } : {}),
  };
}

/**
 * The registry over the stack's database, its file and its deployment record (when there is one yet).
 * For a chain after the first, `runTimeSource` is the first chain's database (docs/corporate-actions.md,
 * "Several chains").
 */
export async function openRegistry(config: AppConfig, db: Db, now?: () => number, runTimeSource?: Db): Promise<CorporateActionRegistry> {
  const file = await loadCorporateActions(config.corporateActionsFile);
  const deployment = (await readDeploymentRecord(deploymentPath(config)).catch(() => undefined))?.record;
  const stock = deployment && stockDeploymentOf(deployment);
  return createCorporateActionRegistry({
    db,
    fileActions: file.list(),
    symbols: DEMO_SYMBOLS.map((s) => s.symbol),
    stocks: stock?.contracts.stocks,
    cashToken: stock?.contracts.cashToken,
    // No deployment yet: the venue will start today at the earliest, so earlier file actions are history.
    venueStartDate: venueStartDateOf(stock ? stock.deployedAt : Date.now()),
    now,
    ...(runTimeSource === undefined ? {} : { runTimeSource }),
  });
}

function addedView(r: CorporateActionRecord) {
  const base = { actionId: r.actionId, symbol: r.symbol, type: r.type, exDate: r.exDate, recordDate: r.recordDate ?? r.exDate };
  if (r.type === 'SPLIT') return { ...base, ratio: r.ratio, effectiveAt: new Date(splitEffectiveAt(r.exDate, r.createdAt)).toISOString(), status: r.status };
  return { ...base, amount: r.amount, currency: r.currency, status: r.status };
}

function listRow(a: StockCorporateAction) {
  return {
    // The id `retry <actionId>` takes.
    id: actionIdOf(a.symbol, a.exDate),
    symbol: a.symbol,
    type: a.type,
    exDate: a.exDate,
    value: a.type === 'SPLIT' ? a.ratio : `${a.amount} ${a.currency ?? ''}`.trim(),
    status: a.status,
    txHash: a.txHash ?? null,
    netPaid: a.dividend?.netAmount ?? null,
    holders: a.dividend?.holders ?? null,
    reason: a.reason ?? null,
  };
}

async function withDb<T>(fn: (config: AppConfig, db: Db) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = await openAppDatabase(config);
  try {
    return await fn(config, db);
  } finally {
    await db.close();
  }
}

/** One chain's store as the CLI reads it: its id, configuration and database. */
interface ChainStore {
  chainId: number;
  config: AppConfig;
  db: Db;
}

/**
 * Every chain's store (the first chain's first): each chain applies a run-time action with its own
 * state (docs/corporate-actions.md, "Several chains"). A chain after the first whose data directory
 * does not exist yet (SQLite: never started) has nothing stored and is left out.
 */
async function withChains<T>(fn: (chains: ChainStore[]) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const chains: ChainStore[] = [];
  try {
    chains.push({ chainId: config.chainId, config, db: await openAppDatabase(config) });
    for (const setting of config.stockChains.slice(1)) {
      const chainConfig = chainVenueConfig(config, setting);
      if (config.databaseUrl === undefined && !fs.existsSync(chainConfig.dataDir)) continue;
      chains.push({ chainId: setting.chainId, config: chainConfig, db: await openAppDatabase(chainConfig) });
    }
    return await fn(chains);
  } finally {
    for (const c of chains) await c.db.close();
  }
}

/** Each chain's rows, one per action and chain, newest ex-date first, then by symbol and chain. */
export async function listPerChain(chains: readonly ChainStore[], symbol?: string): Promise<Array<StockCorporateAction & { chainId: number }>> {
  const first = chains[0];
  const perChain = await Promise.all(
    chains.map(async (c, i) => (await openRegistry(c.config, c.db, undefined, i === 0 ? undefined : first.db)).list(symbol).then((rows) => rows.map((r) => ({ ...r, chainId: c.chainId, order: i })))),
  );
  return perChain
    .flat()
    .sort((x, y) => (x.exDate !== y.exDate ? (x.exDate < y.exDate ? 1 : -1) : x.symbol !== y.symbol ? (x.symbol < y.symbol ? -1 : 1) : x.order - y.order))
    .map(({ order: _order, ...row }) => row);
}

export function corporateActionsCommand(): Command {
  const cmd = new Command('corporate-actions').description('schedule and list splits and dividends (dividends are paid on chain at their ex-date)');
  cmd
    .command('add')
    .description('schedule a cash dividend (--dividend: paid in the cash token to the holders of record at its ex-date; today: at once) or a split (--split: the shares multiplied at its ex-date)')
    .requiredOption('--symbol <symbol>', 'listed stock symbol, e.g. AAPL')
    .option('--dividend <amount>', 'cash per share, a decimal with at most 8 places, e.g. 0.26')
    .option('--split <ratio>', 'new:old shares, e.g. 10:1 (the Stock token\'s multiplier on chain, at 00:00 New York on the ex-date or just after it is added)')
    .requiredOption('--ex-date <date>', 'YYYY-MM-DD (New York); today or later')
    .option('--record-date <date>', 'YYYY-MM-DD, not before the ex-date (default: the ex-date)')
    .option('--currency <code>', 'ISO 4217 code of the amount (default USD)')
    .option('--json', 'machine-readable output')
    .action(async (o) => {
      const added = await withDb(async (config, db) => (await openRegistry(config, db)).add(addInputOf(o)));
      const what = added.type === 'SPLIT' ? `a ${added.ratio} split` : `${added.amount} ${added.currency} per share`;
      print(o, addedView(added), () => `scheduled ${added.actionId}: ${what}, ex-date ${added.exDate}\n${fields(addedView(added))}`);
    });
  cmd
    .command('list')
    .description('every corporate action (configuration file and added) with its state; with several chains, its state on each chain')
    .option('--symbol <symbol>', 'only this symbol')
    .option('--json', 'machine-readable output')
    .action(async (o) => {
      await withChains(async (chains) => {
        if (chains.length === 1) {
          const rows = await (await openRegistry(chains[0].config, chains[0].db)).list(o.symbol);
          print(o, rows, () => table(rows.map(listRow)));
          return;
        }
        // Several chains: one row per action and chain, each with the chain's own state.
        const rows = await listPerChain(chains, o.symbol);
        print(o, rows, () => table(rows.map((r) => ({ chain: r.chainId, ...listRow(r) }))));
      });
    });
  cmd
    .command('retry')
    .description('put a failed action back on the schedule (e.g. after funding the paying wallet), on every chain where it failed')
    .argument('<actionId>', 'SYMBOL-YYYY-MM-DD, the id column of `list`')
    .option('--json', 'machine-readable output')
    .action(async (actionId: string, o) => {
      const retried = await withChains(async (chains) => {
        const on: number[] = [];
        for (const c of chains) if (await rescheduleFailedAction(c.db, actionId, Date.now())) on.push(c.chainId);
        return { on, several: chains.length > 1 };
      });
      if (retried.on.length === 0) throw new ValidationError('actionId', `${actionId} is not a failed corporate action`);
      const out = retried.several ? { actionId, status: 'scheduled', chainIds: retried.on } : { actionId, status: 'scheduled' };
      print(o, out, () => `${actionId} scheduled again${retried.several ? ` on chain ${retried.on.join(', ')}` : ''}`);
    });
  return cmd;
}
