/**
 * The perpetual engine's interface: commands in, results and events out. Everything here is plain
 * data; money is bigint micro-USD, prices integer ticks, sizes integer lots, times milliseconds
 * given by the caller. `snapshot()` is the only JSON-safe form (bigints as decimal strings);
 * `toJsonSafe` converts events and results the same way for a journal.
 *
 * The types live by concern in types/ (commands, events, results, read models, snapshot); this
 * module is the one place the rest of the code imports them from.
 */

export type { Side } from './book/order-book.ts';
// The order vocabulary is the wire contract's (packages/contract, pure data): a value the API takes
// is one the engine knows, by construction.
import type { MarginMode, OrderType, TimeInForce, TriggerBy } from '@tokex/contract';
export type { MarginMode, OrderType, TimeInForce, TriggerBy };

/** Result codes: the names of result-codes.ts (the API maps them onto its numbers and statuses). */
export type { RejectCode, ResultCode } from './result-codes.ts';
export { ENGINE_RULES } from './types/command-types.ts';
export type {
  DepositCommand,
  WithdrawCommand,
  PlaceOrderCommand,
  AmendOrderCommand,
  CancelOrderCommand,
  CancelOrdersCommand,
  CancelAllCommand,
  SetLeverageCommand,
  AdjustMarginCommand,
  SetMarkPriceCommand,
  ApplySplitCommand,
  SetRulesCommand,
  AddInstrumentCommand,
  UpdateInstrumentCommand,
  RequestWithdrawalCommand,
  SettleWithdrawalCommand,
  AddLiquidityCommand,
  RemoveLiquidityCommand,
  CancelAllAfterCommand,
  ApplyFundingCommand,
  EngineCommand,
  CommandKind,
} from './types/command-types.ts';
export type {
  OrderStatus,
  DoneReason,
  OrderAcceptedEvent,
  OrderTriggeredEvent,
  OrderAmendedEvent,
  OrderRestingEvent,
  TradeEvent,
  OrderDoneEvent,
  PositionChangedEvent,
  BalanceReason,
  BalanceChangedEvent,
  FundingPaymentEvent,
  FundingAppliedEvent,
  MarkPriceEvent,
  SplitEvent,
  LeverageChangedEvent,
  InstrumentConfiguredEvent,
  WithdrawalEvent,
  LiquidityEvent,
  LiquidationEvent,
  AdlEvent,
  InsuranceEvent,
  BadDebtEvent,
  CancelAllAfterEvent,
  EngineEvent,
  EventType,
} from './types/event-types.ts';
export type {
  Rejected,
  RejectDetail,
  Accepted,
  OrderOutcome,
  PlaceOrderAccepted,
  AmendAccepted,
  CancelOutcome,
  CancelOrdersAccepted,
  CancelAllAccepted,
  WithdrawalAccepted,
  LiquidityAccepted,
  SplitAccepted,
  PlaceOrderResult,
  AmendOrderResult,
  CancelOrdersResult,
  CancelAllResult,
  CommandResult,
} from './types/result-types.ts';
export type {
  HeldOrderFields,
  OrderView,
  PositionView,
  AccountView,
  MarginSummary,
} from './types/view-types.ts';
export { toJsonSafe } from './types/snapshot-types.ts';
export type {
  PositionSnapshot,
  AccountSnapshot,
  OrderSnapshot,
  InstrumentStateSnapshot,
  ClientOrderSnapshot,
  WithdrawalSnapshot,
  LpSnapshot,
  EngineSnapshot,
} from './types/snapshot-types.ts';
