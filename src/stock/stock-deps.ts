/**
 * What the stock API's route modules need from the rest of the system. The app wires real
 * implementations (chain reader over viem, stores over SQLite/PostgreSQL, the market-data service);
 * route modules only see these interfaces.
 */
import type { StockCashierBuffer, StockCashTokenConfig, StockCorporateAction, StockFeeConfig, StockOneClickStatusValue, StockScheduledChange } from '@tokex/contract';
import type { Address, Hex } from 'viem';
import type { Db } from '../storage/database.ts';
import type { CalldataJournal } from './calldata-journal.ts';
import type { QuoteReader } from '../marketdata/market-types.ts';
import type { MarketCalendar } from '../marketdata/market-calendar.ts';
import type { SessionAware } from '../marketdata/symbol-catalog.ts';
import type { RelaySignals } from './relay-signals.ts';

export interface StockListing {
  symbol: string;
  name: string;
  underlying: string;
  exchange: string;
  address: Address;
  decimals: number;
}

export interface StockDirectory {
  list(): readonly StockListing[];
  bySymbol(symbol: string): StockListing | undefined;
  byAddress(address: string): StockListing | undefined;
}

/** A cash token's row of the market config, as `GET config` answers it. */
export type CashTokenConfigView = StockCashTokenConfig;

/** On-chain market configuration, amounts as decimal strings in their natural units. */
export interface MarketConfigView {
  cashierBuffer: StockCashierBuffer;
  exchangeFeeConfig: StockFeeConfig;
  cashierTokenConfig: CashTokenConfigView[];
  stocks: Array<{ symbol: string; address: Address; decimals: number; totalSupply: string }>;
  /** Block the snapshot was read at and when (ms). */
  blockNumber: string;
  updatedAt: number;
}

/** Raw on-chain amounts in each token's smallest unit (mUSD: 18 decimals). */
export interface AccountView {
  mUsd: { available: bigint; locked: bigint };
  stocks: Array<{ address: Address; walletBalance: bigint; exchangeBalance: bigint; lockedExchangeBalance: bigint; walletAllowance: bigint }>;
  cashTokens: Array<{ address: Address; walletBalance: bigint; walletAllowance: bigint }>;
}

/** A wallet's delegation on the One Click router, in tokex's words (the routes answer it through oneClickStatusView). */
export interface OneClickView {
  status: StockOneClickStatusValue;
  /** The delegatee while the delegation has not expired; zero otherwise. */
  delegatee: Address;
  /** When the delegation ends, chain seconds (0: none or expired). */
  expiresAt: number;
}

/** A mined transaction as the tx-recording endpoints need it. */
export interface MinedTransaction {
  hash: Hex;
  from: Address;
  to: Address | null;
  input: Hex;
  status: 'success' | 'reverted';
  blockNumber: bigint;
  logs: Array<{ address: Address; topics: Hex[]; data: Hex; logIndex: number }>;
}

export interface StockChainReader {
  /** Cached snapshot, refreshed on a schedule; throws ChainUnavailableError when none was ever read. */
  marketConfig(): Promise<MarketConfigView>;
  /** The cached snapshot without waiting, if there is one (hot read paths answer synchronously). */
  cachedMarketConfig(): MarketConfigView | undefined;
  account(user: Address, spender?: Address): Promise<AccountView>;
  oneClick(user: Address): Promise<OneClickView>;
  /** The One Click router's delegation nonce of `user` for `delegatee` (what the next `Delegate` to it signs). */
  oneClickNonce(user: Address, delegatee: Address): Promise<bigint>;
  /** Gas of a call as `from` would send it; ChainRevertError when it would revert. */
  estimateGas(call: { from: Address; to: Address; data: Hex }): Promise<bigint>;
  /** What `account` holds in the chain's native currency, and the fee per gas a transaction pays now. */
  gasFunds(account: Address): Promise<{ balance: bigint; maxFeePerGas: bigint }>;
  /** The transaction with its receipt; undefined when the chain does not know the hash. */
  transaction(hash: Hex): Promise<MinedTransaction | undefined>;
}

export type CorporateActionView = StockCorporateAction;

export interface StockContracts {
  stockRouter: Address;
  oneClickRouter: Address;
  cashier: Address;
  cashToken: Address;
}

/** One Click: the relayer users delegate to, and how the API reaches it. */
export interface OneClickDeps {
  /** The relayer's address: the delegatee users sign for. */
  relayer: Address;
  /** In-process wake-ups with the relayer when it runs in this process. */
  signals: RelaySignals;
  /** How long a send call waits for its transaction's receipt before answering `pending`. */
  waitMs: number;
  /** How often the journal is read while waiting (the relayer may run elsewhere). */
  pollMs: number;
}

export interface StockApiDeps {
  chainId: number;
  contracts: StockContracts;
  /** How long a tx-recording call waits for the indexer to reach the transaction's block. */
  indexWaitMs?: number;
  product: string;
  /** Service prefix before /api/v1 ('' when none). */
  prefix: string;
  db: Db;
  /**
   * The market data's database, where the price history lives: the first chain's (one feed serves
   * every chain, docs/stock-api.md "Several chains"). Absent: `db`.
   */
  historyDb?: Db;
  calldataJournal: CalldataJournal;
  stocks: StockDirectory;
  quotes: QuoteReader;
  chain: StockChainReader;
  /**
   * The market calendar (the stack's venue calendar: its session flags per symbol and, under
   * us-sessions, the session rules, on the calendar's clock).
   */
  calendar: Pick<MarketCalendar, 'kind' | 'isOpen' | 'session'> & SessionAware;
  /**
   * The corporate-action table (file and run-time actions, with their states); with `userAddress`,
   * each dividend carries that wallet's DIVIDEND operations (docs/corporate-actions.md).
   */
  corporateActions(symbol?: string, opts?: { userAddress?: string }): CorporateActionView[] | Promise<CorporateActionView[]>;
  /** Absent when no relayer is configured: the One Click endpoints then answer 503. */
  oneClick?: OneClickDeps;
  /** A quote older than this is answered `stale: true` (the executor's quote max age). Default 30 000. */
  quoteMaxAgeMs?: number;
  /**
   * The owner changes waiting in the venues' timelocks (GET config's `scheduled`), read from the
   * chain with a short cache. Absent: `scheduled` is empty.
   */
  scheduledChanges?: () => Promise<StockScheduledChange[]>;
  now?: () => number;
}
