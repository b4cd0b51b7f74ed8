/**
 * Kysely table interfaces: the row shapes exactly as stored, shared by SQLite and PostgreSQL.
 *
 * Conventions every table follows, so both engines give back identical values:
 * - amounts, prices and quantities are TEXT decimal strings (exact on both engines, no float detour);
 * - times are BIGINT milliseconds since the epoch (read back as JS numbers on both engines);
 * - booleans are INTEGER 0/1 (SQLite has no boolean type);
 * - lists are TEXT holding JSON.
 *
 * A migration that adds a table adds its interface here and a key in `DatabaseSchema`.
 */

export interface ApiKeysTable {
  api_key: string;
  /** `stock` or `perp` (0004). */
  api: string;
  secret_ciphertext: string;
  label: string;
  /** JSON array of the key's permissions (0004; validated by src/auth/api-key-model.ts). */
  permissions: string;
  /**
   * JSON array of a stock key's scopes `{chainId, productType, access}` (0029); `[]` for a perp key.
   * chain_id, product and permissions hold the first scope's, for rows and clients before scopes.
   */
  scopes: string;
  /** JSON array of exact IP addresses. */
  ip_whitelist: string;
  chain_id: number;
  /** Stock product scope; empty for perp keys. */
  product: string;
  /** Lower-case 0x address, or null for an unbound key. */
  user_address: string | null;
  /** 0 or 1. */
  active: number;
  expires_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface CandlesTable {
  symbol: string;
  interval: string;
  open_time: number;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
}

export interface QuotesTable {
  symbol: string;
  bid: string;
  ask: string;
  last: string;
  timestamp: number;
  /** The stock's share multiplier the prices are in; null: never split (0025). */
  multiplier: string | null;
}

export interface MetaTable {
  key: string;
  value: string;
}

/** Each tokex release that has started on this database (0026; src/storage/database-version.ts). */
export interface AppReleasesTable {
  /** package.json's semantic version, `0.2.0`. */
  version: string;
  /** When that release first opened this database, ms since the epoch. */
  first_started_at: number;
}

// ------------------------------------------------------- chain indexers (0002, 0003, 0005)

/** Rows of `chain_blocks` and `chain_events` belong to one indexer (its checkpoint's name). */
export interface ChainBlocksTable {
  indexer: string;
  hash: string;
  number: number;
  /** Null for a block known only from its logs. */
  parent_hash: string | null;
  /** Milliseconds. */
  timestamp: number;
}

export interface ChainEventsTable {
  indexer: string;
  block_hash: string;
  block_number: number;
  block_timestamp: number;
  tx_hash: string;
  log_index: number;
  /** Position of the log among the transaction's logs from the indexed contracts. */
  ordinal: number;
  address: string;
  event_name: string;
  /** JSON object of the decoded arguments; integers wider than 48 bits as decimal strings. */
  args: string;
  /** The projection entity the event belongs to (`o:<orderId>`, `c:<operationId>`, `s:<operationId>`), if any. */
  entity_key: string | null;
}

export interface IndexerCheckpointsTable {
  name: string;
  block_number: number;
  block_hash: string;
  updated_at: number;
}

// ------------------------------------------------- stock domain (0002, renamed stock_* in 0005)

export interface OrdersTable {
  order_id: string;
  user_address: string;
  stock_address: string;
  side: string;
  order_type: string;
  status: string;
  time_in_force: string;
  deadline: number;
  quantity: string;
  notional: string;
  price: string;
  locked: string;
  filled_quantity: string;
  filled_notional: string;
  fees: string;
  place_tx_hash: string;
  cancel_tx_hash: string | null;
  close_tx_hash: string | null;
  created_at: number;
  updated_at: number;
  closed_at: number | null;
  block_number: number;
  place_log_index: number;
  /** The stock's share multiplier (1e18 = no split yet) the order's shares are stated in (0024). */
  multiplier: string;
}

/** Why the executor closed a stock order REJECTED or EXPIRED (0021; src/stock/store/order-reason-store.ts). */
export interface StockOrderReasonsTable {
  order_id: string;
  /** `Rejected` or `Expired`. */
  status: string;
  reason: string;
  decided_at: number;
}

export interface OrderFillsTable {
  order_id: string;
  tx_hash: string;
  block_number: number;
  log_index: number;
  quantity: string;
  price: string;
  notional: string;
  fee: string;
  timestamp: number;
}

export interface CashOperationsTable {
  operation_id: string;
  kind: string;
  user_address: string;
  token_address: string;
  token_amount: string;
  musd_amount: string;
  status: string;
  /** 0 or 1. */
  instant: number;
  queue_id: string | null;
  tx_hash: string;
  settle_tx_hash: string | null;
  block_number: number;
  log_index: number;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  /** JSON array of {step, txHash, timestamp}. */
  steps: string;
}

export interface StockOperationsTable {
  operation_id: string;
  kind: string;
  user_address: string;
  stock_address: string;
  amount: string;
  status: string;
  tx_hash: string;
  block_number: number;
  log_index: number;
  created_at: number;
  updated_at: number;
}

export interface PositionsTable {
  user_address: string;
  stock_address: string;
  wallet_balance: string;
  exchange_balance: string;
  locked_balance: string;
  block_number: number;
  updated_at: number;
}

export interface TxRecordsTable {
  tx_hash: string;
  api_key: string;
  kind: string;
  recorded_at: number;
}

export interface CalldataRequestsTable {
  calldata_hash: string;
  api_key: string;
  kind: string;
  created_at: number;
}

/** The One Click relay journal (0006). */
export interface RelayRequestsTable {
  request_id: string;
  api_key: string;
  user_address: string;
  kind: string;
  to_address: string;
  calldata: string;
  gas_limit: string;
  status: string;
  nonce: number | null;
  tx_hash: string | null;
  tx_versions: string | null;
  block_number: number | null;
  gas_used: string | null;
  result: string | null;
  error: string | null;
  /** The client's Idempotency-Key and its request's fingerprint (0019); null without a key. */
  idempotency_key: string | null;
  request_fingerprint: string | null;
  created_at: number;
  updated_at: number;
}

// ------------------------------------------------------------- perp domain

/** The MarginVault's deposits and withdrawals (0007). */
export interface PerpCollateralEventsTable {
  /** `${txHash}-${logIndex}`. */
  event_id: string;
  kind: string;
  /** Lower-case address. */
  account: string;
  /** Integer string, collateral-token units. */
  amount: string;
  tx_hash: string;
  block_number: number;
  log_index: number;
  /** Milliseconds. */
  block_timestamp: number;
  /** 0x bytes32 of a withdrawal; null for a deposit. */
  withdrawal_id: string | null;
  /** 0 or 1: the engine has taken the movement into its accounts. */
  applied: number;
  applied_at: number | null;
  /** 0 or 1: applied, then removed from the chain by a reorg; the engine must reverse it. */
  orphaned: number;
}

/** The perpetual engine's command journal (0008; docs/perp-sequencer.md). */
export interface PerpJournalTable {
  /** Journal order: 1, 2, … without gaps. */
  seq: number;
  command_id: string;
  kind: string;
  /** JSON of the command, bigints as decimal strings. */
  command: string;
  ts: number;
  /** The engine's result code: OK rows are replayed, refused ones only answer resubmissions. */
  code: string;
  /** The engine's last event seq after the command. */
  last_event_seq: number;
  /** JSON of the answer without its events. */
  result: string;
}

/** Engine snapshots bounding the replay (0008). */
export interface PerpSnapshotsTable {
  /** The journal seq the snapshot includes (0: the empty engine). */
  last_seq: number;
  /** sha256 hex of `snapshot` (= the engine's stateHash()). */
  state_hash: string;
  /** JSON of EngineSnapshot. */
  snapshot: string;
  created_at: number;
}

export interface DatabaseSchema {
  api_keys: ApiKeysTable;
  candles: CandlesTable;
  quotes: QuotesTable;
  meta: MetaTable;
  app_releases: AppReleasesTable;
  chain_blocks: ChainBlocksTable;
  chain_events: ChainEventsTable;
  indexer_checkpoints: IndexerCheckpointsTable;
  stock_orders: OrdersTable;
  stock_order_fills: OrderFillsTable;
  stock_order_reasons: StockOrderReasonsTable;
  stock_cash_operations: CashOperationsTable;
  stock_operations: StockOperationsTable;
  stock_positions: PositionsTable;
  stock_tx_records: TxRecordsTable;
  stock_calldata_requests: CalldataRequestsTable;
  stock_relay_requests: RelayRequestsTable;
  perp_collateral_events: PerpCollateralEventsTable;
  perp_journal: PerpJournalTable;
  perp_snapshots: PerpSnapshotsTable;
  perp_api_key_nonces: PerpApiKeyNoncesTable;
  perp_orders: PerpOrdersTable;
  perp_trades: PerpTradesTable;
  perp_transactions: PerpTransactionsTable;
  perp_funding_rates: PerpFundingRatesTable;
  perp_candles: PerpCandlesTable;
  perp_order_nonces: PerpOrderNoncesTable;
  perp_vault_txs: PerpVaultTxsTable;
  perp_withdrawals: PerpWithdrawalsTable;
  perp_liquidity_moves: PerpLiquidityMovesTable;
  perp_insurance_moves: PerpInsuranceMovesTable;
}

/** Used nonces of wallet-signed perp API-key creations (0009). */
export interface PerpApiKeyNoncesTable {
  /** Lower-case 0x address of the signing wallet. */
  wallet: string;
  /** The message's uint64 nonce as a decimal string. */
  nonce: string;
  /** The message's expiry, ms since the epoch. */
  expiry: number;
  used_at: number;
}

// Read side of the perp engine (0010): prices in ticks, sizes in lots, money micro-USD strings.

/** Every order the engine accepted, as its events left it. */
export interface PerpOrdersTable {
  order_id: number;
  account: string;
  symbol: string;
  side: string;
  type: string;
  time_in_force: string;
  /** Limit or worst price; null for a market order without one. */
  price_ticks: number | null;
  size_lots: number;
  requested_size_lots: number;
  filled_lots: number;
  filled_notional: string;
  fee: string;
  /** NEW, PARTIALLY_FILLED, FILLED, CANCELED or EXPIRED. */
  status: string;
  reason: string | null;
  reduce_only: number;
  client_order_id: string | null;
  created_at: number;
  updated_at: number;
  /** 1 for the engine's liquidation order of the account (0015). */
  liquidation: number;
  /** Trigger orders (0022): the trigger price, MARK or LAST, 1 for closePosition, when it fired. */
  trigger_price_ticks: number | null;
  trigger_by: string | null;
  close_position: number;
  triggered_at: number | null;
}

/** One side of a fill. */
export interface PerpTradesTable {
  /** The engine event seq of the trade. */
  trade_id: number;
  role: string;
  account: string;
  symbol: string;
  order_id: number;
  side: string;
  price_ticks: number;
  size_lots: number;
  notional: string;
  fee: string;
  realised_pnl: string;
  ts: number;
  /** 1 on the taker side of a liquidation order's fill (0015). */
  liquidation: number;
}

/** Money in or out of an account (PERP_TRANSACTION_TYPES in src/perp/store/perp-history-store.ts). */
export interface PerpTransactionsTable {
  tx_id: string;
  account: string;
  type: string;
  symbol: string | null;
  /** Signed micro-USD: positive credits the account. */
  amount: string;
  /** What caused it: an order id, a chain transaction, a funding time. */
  ref: string | null;
  ts: number;
}

export interface PerpFundingRatesTable {
  symbol: string;
  funding_time: number;
  rate_e9: string;
  mark_price_ticks: number;
}

export interface PerpCandlesTable {
  symbol: string;
  /** trade, mark or index. */
  kind: string;
  interval: string;
  open_time: number;
  open_ticks: number;
  high_ticks: number;
  low_ticks: number;
  close_ticks: number;
  volume_lots: number;
  turnover: string;
  trades: number;
}

export interface PerpOrderNoncesTable {
  account: string;
  nonce: string;
  /** EIP-712 hash of the signed order that used the nonce. */
  order_hash: string;
  expiry: number;
  used_at: number;
}

export interface PerpVaultTxsTable {
  tx_hash: string;
  kind: string;
  account: string;
  amount: string;
  api_key: string;
  nonce: number;
  /** pending, mined or reverted. */
  status: string;
  block_number: number | null;
  submitted_at: number;
  updated_at: number;
}

// The liquidity pool and the insurance fund (0014): engine events by seq; money micro-USD strings.

/** An addition to (ADD) or removal from (REMOVE) the liquidity pool by a holder. */
export interface PerpLiquidityMovesTable {
  /** The engine event seq of the `liquidity` event. */
  seq: number;
  account: string;
  action: string;
  /** Collateral moved (micro-USD). */
  amount: string;
  /** Shares minted or burned (micro-shares). */
  shares: string;
  /** The holder's shares after. */
  holder_shares: string;
  total_shares: string;
  /** Pool equity after (micro-USD). */
  pool_equity: string;
  locked_until: number;
  ts: number;
}

/** A movement of the insurance fund: a liquidation fee in, or bad debt paid out. */
export interface PerpInsuranceMovesTable {
  seq: number;
  /** liquidationFee or badDebt. */
  reason: string;
  /** The account liquidated, or whose bad debt was paid. */
  account: string;
  /** Signed micro-USD: positive into the fund. */
  delta: string;
  /** The fund's balance after. */
  balance: string;
  ts: number;
}

/** A withdrawal from its reservation to the vault's payment (0013; src/perp/store/withdrawal-store.ts). */
export interface PerpWithdrawalsTable {
  /** 0x + 64 hex: the vault's bytes32 withdrawal id. */
  withdrawal_id: string;
  account: string;
  client_withdrawal_id: string | null;
  /** Integer string, micro-USD (= collateral-token units). */
  amount: string;
  /** REQUESTED, PENDING, SENT, COMPLETED or FAILED. */
  status: string;
  /** PAID or FAILED once decided, before the engine settles. */
  outcome: string | null;
  tx_hash: string | null;
  /** JSON array of the signed versions: {hash, raw, nonce}. */
  tx_versions: string;
  block_number: number | null;
  reason: string | null;
  /** The wallet's signature of the Withdrawal (0027); null on rows from before 0.2.0. */
  signature: string | null;
  /** Unix seconds: the signed deadline (0027). */
  deadline: number | null;
  /** Lower-case 0x address paid (0027). */
  recipient: string | null;
  created_at: number;
  updated_at: number;
}
