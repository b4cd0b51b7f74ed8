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
import { openAppDatabase } from '../app/storage-wiring.ts';
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

/** The registry over the stack's database, its file and its deployment record (when there is one yet). */
export async function openRegistry(config: AppConfig, db: Db, now?: () => number): Promise<CorporateActionRegistry> {
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
    .description('every corporate action (configuration file and added) with its state')
    .option('--symbol <symbol>', 'only this symbol')
    .option('--json', 'machine-readable output')
    .action(async (o) => {
      const rows = await withDb(async (config, db) => (await openRegistry(config, db)).list(o.symbol));
      print(o, rows, () => table(rows.map(listRow)));
    });
  cmd
    .command('retry')
    .description('put a failed action back on the schedule (e.g. after funding the paying wallet)')
    .argument('<actionId>', 'SYMBOL-YYYY-MM-DD, the id column of `list`')
    .option('--json', 'machine-readable output')
    .action(async (actionId: string, o) => {
      const retried = await withDb((_config, db) => rescheduleFailedAction(db, actionId, Date.now()));
      if (!retried) throw new ValidationError('actionId', `${actionId} is not a failed corporate action`);
      print(o, { actionId, status: 'scheduled' }, () => `${actionId} scheduled again`);
    });
  return cmd;
}
