/**
 * The stock streams' task (stock-stream-task.ts, which makes it): what a role gives it and what it
 * answers.
 */
import type { StockCorporateAction } from '@tokex/contract';
import type { Logger } from '../../lib/logger.ts';
import type { Quote, QuoteReader } from '../../marketdata/market-types.ts';
import type { MarketCalendar } from '../../marketdata/market-calendar.ts';
import type { Db } from '../../storage/database.ts';
import type { StreamPublisher } from '../../streams/stream-publisher.ts';
import type { BalanceVenue } from '../balance-view.ts';
import type { StockIndexChange } from '../indexer/stock-indexer.ts';
import type { StockChainReader, StockDirectory } from '../stock-deps.ts';

export interface StockStreamTaskOptions {
  db: Db;
  /** Where the price history lives, for the candles: the first chain's database (the one feed's). Absent: `db`. */
  historyDb?: Db;
  publisher: StreamPublisher;
  /** The quotes; with `onQuote` (the simulator in this process) every quote is published as it comes. */
  quotes: QuoteReader & { onQuote?(listener: (q: Quote) => void): () => void };
  chain: Pick<StockChainReader, 'account' | 'marketConfig'>;
  stocks: StockDirectory;
  calendar: MarketCalendar;
  /**
   * The chain id and product the `balances` bodies name (`chainId`, `productType`, as
   * `GET users/{id}/balance` answers them); without it they leave both out.
   */
  venue?: BalanceVenue;
  /**
   * The venue's stock API keys: a bound wallet's balances are streamed from the start, even before
   * its first order; a key bound to none has the streams of what it recorded.
   */
  keys?: () => Promise<readonly StreamKey[]>;
  /** How long a changed order's or operation's transaction is looked up for a recording. Default 60 000 ms. */
  recordWaitMs?: number;
  /** Default 250 ms, or 1 000 ms when the quotes come through `onQuote`. */
  quoteMs?: number;
  /** Default 1 000 ms. */
  candleMs?: number;
  /** A quote older than this is published `stale: true` (the executor's quote max age). Default 30 000 ms. */
  quoteMaxAgeMs?: number;
  /** How often the keys are listed (a new key, a key bound to a new wallet). Default 1 000 ms. */
  keysMs?: number;
  /** How often the transactions waiting for a recording are looked up. Default 250 ms. */
  recordingMs?: number;
  /** Wait before a failed round (recordings, market config, balances) is tried again. Default 500 ms. */
  retryMs?: number;
  /**
   * Cash dividends (docs/corporate-actions.md): each payout once paid is an `operations` update of
   * its holder (a DIVIDEND operation) and refreshes the holder's balance. Unset: none published.
   */
  dividends?: { cashToken: string; cashDecimals: number; pollMs?: number };
  /**
   * The `corporateActions` channel (docs/corporate-actions.md, "Streams"): each symbol's
   * `GET corporate-action` rows (`list`, the route's registry, so the file's actions are there too),
   * and each row again when a stored action changed (its `updated_at`, polled every `pollMs`,
   * default 1 000 ms; the whole table every `sweepMs`, default 10 000 ms, for a writer whose clock
   * is behind the others'). Unset: the channel stays empty.
   */
  corporateActions?: { list(symbol: string): Promise<StockCorporateAction[]>; pollMs?: number; sweepMs?: number };
  logger?: Pick<Logger, 'warn' | 'error'>;
  now?: () => number;
}

export interface StockStreamTask {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Starts a new epoch from the current state (the broker lost a batch, a reorg). */
  resync(): Promise<void>;
  /** The stock indexer's commit listener: what a committed batch wrote. */
  changed(change: StockIndexChange): void;
}

export interface StreamKey {
  apiKey: string;
  userAddress: string | null;
  permissions: readonly string[];
  /** A stock key's scopes; without them, `permissions` says whether the key may write. */
  scopes?: ReadonlyArray<{ access: string }>;
  active: boolean;
}
