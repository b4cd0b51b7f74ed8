/**
 * The stock streams' dividends and corporate actions (stock-stream-task.ts publishes what this
 * answers, as its other updates): each payout once paid as its holder's DIVIDEND operation, and each
 * symbol's `GET corporate-action` rows whenever its stored actions changed. Apart from the task's
 * orders, operations, balances, quotes and candles: these two read the corporate-action store on
 * their own cursors.
 */
import type { StockCorporateAction, StockDividendOperation } from '@tokex/contract';
import type { Db } from '../../storage/database.ts';
import type { PublishedUpdate } from '../../streams/stream-publisher.ts';
import type { StockDirectory } from '../stock-deps.ts';
import { dividendOperationView } from '../corporate-actions/corporate-action-registry.ts';
import {
  lastPaidPayout,
  listActionsUpdatedAfter,
  listCorporateActions,
  listPayoutsOfUser,
  listPayoutsPaidAfter,
  type CorporateActionRecord,
} from '../corporate-actions/corporate-action-store.ts';
import { CORPORATE_ACTIONS_CHANNEL } from './stock-stream-channels.ts';

export interface CorporateActionFeedOptions {
  db: Db;
  stocks: StockDirectory;
  now: () => number;
  /** Payouts read per poll. */
  round: number;
  dividends?: { cashToken: string; cashDecimals: number };
  corporateActions?: { list(symbol: string): Promise<StockCorporateAction[]>; sweepMs?: number };
  /** What the task last published, by entity (its JSON): the seed's rows are written there. */
  published: Map<string, string>;
  /** The task's check that a row changed since published, and its record of what a round published. */
  fresh(key: string, json: string, marks: Array<[string, string]>): boolean;
  remember(marks: ReadonlyArray<[string, string]>): void;
  /** A payout reached `user`'s wallet: its balances go round too (`kick` follows). */
  walletChanged(user: string): void;
  kick(): void;
}

export interface CorporateActionFeed {
  /** Each wallet's DIVIDEND operations (all its payouts, as `GET corporate-action` shows them to it). */
  dividendViewsOf(wallets: Iterable<string>): Promise<Map<string, StockDividendOperation[]>>;
  /** Moves the dividends' cursor to the last payout paid, as a seed starts (before it reads the payouts). */
  seedDividendCursor(): Promise<void>;
  dividendUpdates(): Promise<PublishedUpdate[]>;
  corporateActionSeed(): Promise<PublishedUpdate[]>;
  corporateActionUpdates(): Promise<PublishedUpdate[]>;
}

export function createCorporateActionFeed(opts: CorporateActionFeedOptions): CorporateActionFeed {
  const { db, stocks, now, published, fresh, remember, walletChanged, kick } = opts;
  const ROUND = opts.round;

  async function dividendViewsOf(wallets: Iterable<string>): Promise<Map<string, StockDividendOperation[]>> {
    const out = new Map<string, StockDividendOperation[]>();
    const d = opts.dividends;
    if (d === undefined) return out;
    let actions: Map<string, CorporateActionRecord> | undefined;
    for (const user of wallets) {
      const payouts = await listPayoutsOfUser(db, user);
      if (payouts.length === 0) continue;
      actions ??= new Map((await listCorporateActions(db)).map((a) => [a.actionId, a]));
      const views: StockDividendOperation[] = [];
      for (const p of payouts) {
        const a = actions.get(p.actionId);
        if (a !== undefined) views.push(dividendOperationView(p, a, d.cashToken, d.cashDecimals));
      }
      out.set(user, views);
    }
    return out;
  }

  /**
   * The last payout paid that the seed read (each epoch's seed holds the ones before among its
   * wallets' operations); a cursor read from the table, not a clock, as the scheduler's clock may
   * be shifted (MARKET_CLOCK_START).
   */
  let dividendCursor = { updatedAt: now(), operationId: '' };
  async function dividendUpdates(): Promise<PublishedUpdate[]> {
    const d = opts.dividends;
    if (d === undefined) return [];
    const paid = await listPayoutsPaidAfter(db, dividendCursor, ROUND);
    if (paid.length === 0) return [];
    const out: PublishedUpdate[] = [];
    const marks: Array<[string, string]> = [];
    for (const { payout, action } of paid) {
      const view = dividendOperationView(payout, action, d.cashToken, d.cashDecimals);
      const user = payout.userAddress.toLowerCase();
      if (fresh(`${user} d:${view.operationId}`, JSON.stringify(view), marks)) out.push({ channel: 'operations', subject: user, data: view });
      // The cash reached the wallet: its balance goes round too.
      walletChanged(user);
    }
    const last = paid[paid.length - 1].payout;
    dividendCursor = { updatedAt: last.updatedAt, operationId: last.operationId };
    remember(marks);
    kick();
    return out;
  }

  /** Stored actions as last seen (each record's JSON) by id, the highest `updated_at` among them, and when the whole table was last read. */
  let actionsSeen = new Map<string, string>();
  let actionCursor = 0;
  let actionSweep = 0;
  const caEntity = (symbol: string, exDate: string) => `${symbol} ca:${exDate}`;

  function sawActions(actions: readonly CorporateActionRecord[]): void {
    for (const a of actions) {
      actionsSeen.set(a.actionId, JSON.stringify(a));
      if (a.updatedAt > actionCursor) actionCursor = a.updatedAt;
    }
  }

  /** Every listed symbol's `GET corporate-action` rows (the channel's snapshots), remembered as published. */
  async function corporateActionSeed(): Promise<PublishedUpdate[]> {
    const ca = opts.corporateActions;
    if (ca === undefined) return [];
    // The table before the rows: a change committed in between is polled again, and found published.
    const stored = await listActionsUpdatedAfter(db, Number.MIN_SAFE_INTEGER);
    const out: PublishedUpdate[] = [];
    for (const listing of stocks.list()) {
      const rows = await ca.list(listing.symbol);
      for (const r of rows) published.set(caEntity(listing.symbol, r.exDate), JSON.stringify(r));
      out.push({ channel: CORPORATE_ACTIONS_CHANNEL, subject: listing.symbol, data: rows });
    }
    actionsSeen = new Map();
    actionCursor = 0;
    actionSweep = now();
    sawActions(stored);
    return out;
  }

  /**
   * The rows of the symbols whose stored actions changed since the last poll (a new action, a new
   * state, totals or transaction), each row published when its body changed. The cursor is the
   * highest `updated_at` seen, read from one millisecond back (a row written in that millisecond and
   * committed after the read); the whole table is read every `sweepMs`, for a writer whose clock is
   * behind (the scheduler runs on the market calendar's clock, MARKET_CLOCK_START; the CLI on the
   * wall clock).
   */
  async function corporateActionUpdates(): Promise<PublishedUpdate[]> {
    const ca = opts.corporateActions;
    if (ca === undefined) return [];
    const t = now();
    const sweep = t - actionSweep >= (ca.sweepMs ?? 10_000);
    const read = await listActionsUpdatedAfter(db, sweep ? Number.MIN_SAFE_INTEGER : actionCursor - 1);
    const changed = read.filter((a) => actionsSeen.get(a.actionId) !== JSON.stringify(a));
    const out: PublishedUpdate[] = [];
    const marks: Array<[string, string]> = [];
    for (const symbol of new Set(changed.map((a) => a.symbol))) {
      // An action on a symbol no longer listed has no stream.
      if (stocks.bySymbol(symbol) === undefined) continue;
      for (const r of await ca.list(symbol)) {
        if (fresh(caEntity(symbol, r.exDate), JSON.stringify(r), marks)) out.push({ channel: CORPORATE_ACTIONS_CHANNEL, subject: symbol, data: r });
      }
    }
    // Only once every row was rendered: a failed round reads the same actions again.
    sawActions(changed);
    if (sweep) actionSweep = t;
    remember(marks);
    return out;
  }

  async function seedDividendCursor(): Promise<void> {
    dividendCursor = (await lastPaidPayout(db)) ?? { updatedAt: 0, operationId: '' };
  }

  return { dividendViewsOf, seedDividendCursor, dividendUpdates, corporateActionSeed, corporateActionUpdates };
}
