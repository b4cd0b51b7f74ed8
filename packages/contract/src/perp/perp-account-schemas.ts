/**
 * The account (docs/perp-api.md "Account and history"): balances, equity and margin levels, the
 * collateral asset, positions, deposits as the MarginVault's logs give them, withdrawals with their
 * payment status, every money movement, and the proof of reserves (docs/proof-of-reserves.md).
 * Answers that depend on chain state carry `blockInfo` (perpChainResponses).
 */
import { PageQueryProps } from '../common/paging.ts';
import { ADDRESS_PATTERN, VISIBLE_ASCII_PATTERN } from '../common/patterns.ts';
import { DecimalIn, DecimalOut, Millis, Nullable, StringEnum, Type, type Static } from '../common/schema-kit.ts';
import {
  DEPOSIT_STATUSES,
  MAX_CLIENT_WITHDRAWAL_ID,
  PERP_TRANSACTION_TYPES,
  WITHDRAWAL_DEADLINE_DEFAULT_S,
  WITHDRAWAL_DEADLINE_MAX_S,
  WITHDRAWAL_DEADLINE_MIN_S,
  WITHDRAWAL_STATUSES,
} from './perp-enums.ts';
import { HexOut, SignatureIn, SymbolParam, TimeRangeProps, TypedDataSchema, type TypedData } from './perp-schemas.ts';

/** The one collateral asset. */
const Usdc = () => StringEnum(['USDC'] as const);

export const AccountSummarySchema = Type.Object({
  account: Type.String(),
  asset: Usdc(),
  balance: DecimalOut({ description: 'collateral in the wallet of the account (USD), isolated margins excluded' }),
  equity: DecimalOut({ description: 'balance + isolated margins + unrealised PnL' }),
  unrealisedPnl: DecimalOut(),
  freeCollateral: DecimalOut({ description: 'what new orders and margin moves may use' }),
  withdrawable: DecimalOut({
    description: 'what a withdrawal may take now: min(balance, balance + cross uPnL) − cross initial margin − order margin, with isolated losses; never unrealised profit',
  }),
  pendingWithdrawals: DecimalOut({ description: 'reserved for withdrawals not paid yet (already out of balance)' }),
  orderMargin: DecimalOut({ description: 'reserved by open orders' }),
  positionMargin: DecimalOut({ description: 'initial margin of cross positions + isolated margins' }),
  maintenanceMargin: DecimalOut(),
  marginRatio: Nullable(Type.String(), { description: 'maintenance margin / equity; 1 is the liquidation line; null when equity ≤ 0' }),
  liquidatable: Type.Boolean(),
  deposited: DecimalOut(),
  withdrawn: DecimalOut(),
  realisedPnl: DecimalOut(),
  fees: DecimalOut({ description: 'fees paid' }),
  funding: DecimalOut({ description: 'net funding received (negative: paid)' }),
});
export type AccountSummary = Static<typeof AccountSummarySchema>;

export const AccountAssetSchema = Type.Object({
  asset: Type.String(),
  balance: DecimalOut(),
  equity: DecimalOut(),
  available: DecimalOut(),
  withdrawable: DecimalOut(),
  pendingWithdrawals: DecimalOut(),
  orderMargin: DecimalOut(),
  positionMargin: DecimalOut(),
});
export type AccountAsset = Static<typeof AccountAssetSchema>;

export const PositionsQuerySchema = Type.Object({ symbol: Type.Optional(SymbolParam), ...PageQueryProps }, { additionalProperties: false });
export type PositionsQuery = Static<typeof PositionsQuerySchema>;

/** A deposit into the margin vault, as indexed from its logs. */
export const AccountDepositSchema = Type.Object({
  id: Type.String({ description: '`txHash-logIndex` of the vault log' }),
  asset: Type.String(),
  amount: DecimalOut(),
  txHash: Type.String(),
  blockNumber: Type.String(),
  withdrawalId: Type.Optional(Nullable(Type.String())),
  status: StringEnum(DEPOSIT_STATUSES, {
    description:
      'a deposit is CREDITED once the engine has applied it, REFUSED (see `reason`) when the engine never will; a withdrawal PAID once its vault log is confirmed; PENDING before',
  }),
  reason: Type.Optional(Nullable(Type.String(), { description: 'why the engine refused a deposit (REFUSED only)' })),
  ts: Millis(),
});
export type AccountDeposit = Static<typeof AccountDepositSchema>;

const WithdrawalInputProps = {
  amount: DecimalIn({ description: 'USD (USDC), at most 6 decimals, at most `withdrawable`' }),
  clientWithdrawalId: Type.String({
    minLength: 1,
    maxLength: MAX_CLIENT_WITHDRAWAL_ID,
    pattern: VISIBLE_ASCII_PATTERN,
    description: 'your id of the withdrawal (1 to 64 visible ASCII characters): the same id answers the same withdrawal; another amount under it is 51021',
  }),
};

const WithdrawalDeadline = (description: string) =>
  Type.Integer({ minimum: 0, maximum: 2 ** 53 - 1, description });

/** `POST account/withdrawals/build`: the typed data the wallet signs for a withdrawal. */
export const BuildWithdrawalBodySchema = Type.Object(
  {
    ...WithdrawalInputProps,
    deadline: Type.Optional(
      WithdrawalDeadline(
        `unix seconds after which the vault refuses to pay it: at least ${WITHDRAWAL_DEADLINE_MIN_S} s and at most ${WITHDRAWAL_DEADLINE_MAX_S} s ahead (default ${WITHDRAWAL_DEADLINE_DEFAULT_S} s)`,
      ),
    ),
  },
  { additionalProperties: false },
);
export type BuildWithdrawalBody = Static<typeof BuildWithdrawalBodySchema>;

export const BuiltWithdrawalSchema = Type.Object({
  typedData: TypedDataSchema(
    'complete EIP-712 typed data for eth_signTypedData_v4: domain TokexPerp / 1 / chain id / margin vault, primaryType Withdrawal(address account,address recipient,uint256 amount,bytes32 withdrawalId,uint64 deadline); amount (USDC units, 6 decimals) and deadline (unix seconds) are decimal strings',
  ),
  withdrawalId: HexOut({ description: "the vault's bytes32 id of the withdrawal" }),
});
export type BuiltWithdrawal = { typedData: TypedData; withdrawalId: string };

/**
 * `POST account/withdrawals`: the amount and id of the build call, its deadline, and the wallet's
 * signature of the built typed data. The vault pays only against that signature.
 */
export const WithdrawBodySchema = Type.Object(
  {
    ...WithdrawalInputProps,
    deadline: WithdrawalDeadline('the deadline the wallet signed (unix seconds)'),
    signature: SignatureIn("the wallet's EIP-712 signature of the Withdrawal (a One-Click session key's is refused)"),
  },
  { additionalProperties: false },
);
export type WithdrawBody = Static<typeof WithdrawBodySchema>;

/** A withdrawal as `POST account/withdrawals` and `GET account/withdrawals` answer it. */
export const PerpWithdrawalSchema = Type.Object({
  withdrawalId: HexOut({ description: "the vault's bytes32 id: keccak256(abi.encode(\"tokex.perp.withdrawal\", account, clientWithdrawalId))" }),
  clientWithdrawalId: Nullable(Type.String()),
  address: HexOut({ description: 'the wallet paid: the account itself' }),
  asset: Usdc(),
  amount: DecimalOut(),
  status: StringEnum(WITHDRAWAL_STATUSES, {
    description:
      'PENDING reserved; SENT the payment transaction is broadcast (txHash); COMPLETED mined and settled; FAILED not payable, the reserve returned to the balance (reason)',
  }),
  txHash: Nullable(HexOut(), { description: 'the payment transaction (the mined one once COMPLETED)' }),
  blockNumber: Nullable(Type.String()),
  reason: Nullable(Type.String(), { description: 'why it FAILED, or what delayed it' }),
  createdAt: Millis(),
  updatedAt: Millis(),
});
export type PerpWithdrawal = Static<typeof PerpWithdrawalSchema>;

/** The answer of `POST account/withdrawals`. */
export const RequestedWithdrawalSchema = Type.Object({
  ...PerpWithdrawalSchema.properties,
  duplicate: Type.Boolean({ description: 'true when the answer is a withdrawal requested before under this clientWithdrawalId' }),
});
export type RequestedWithdrawal = Static<typeof RequestedWithdrawalSchema>;

export const WithdrawalsQuerySchema = Type.Object(
  { status: Type.Optional(StringEnum(WITHDRAWAL_STATUSES)), ...TimeRangeProps, ...PageQueryProps },
  { additionalProperties: false },
);
export type WithdrawalsQuery = Static<typeof WithdrawalsQuerySchema>;

/** A money movement of the account (`GET account/transactions`). */
export const AccountTransactionSchema = Type.Object({
  id: Type.String(),
  type: StringEnum(PERP_TRANSACTION_TYPES),
  symbol: Nullable(Type.String()),
  amount: DecimalOut({ description: 'signed USD: positive credits the account' }),
  asset: Type.String(),
  ref: Nullable(Type.String(), { description: 'the order id (fees, PnL), the vault transaction (deposits) or the funding time' }),
  ts: Millis(),
  account: Type.String({ description: 'the account (its wallet, lower case)' }),
  balanceAfter: DecimalOut({
    description:
      "the sum of the account's movements up to and including this one, in the list's order (ts, then id) whatever the filters: the previous movement's balanceAfter + amount; the balance after it for an account without isolated positions (margin moved into an isolated position is not a movement)",
  }),
});
export type AccountTransaction = Static<typeof AccountTransactionSchema>;

export const TransactionsQuerySchema = Type.Object(
  { type: Type.Optional(StringEnum(PERP_TRANSACTION_TYPES)), symbol: Type.Optional(SymbolParam), ...TimeRangeProps, ...PageQueryProps },
  { additionalProperties: false },
);
export type TransactionsQuery = Static<typeof TransactionsQuerySchema>;

// ------------------------------------------------------------------ proof of reserves

const UINT_DIGITS = '^(0|[1-9][0-9]*)$';
/** An integer string of collateral-token units, as the leaf hashes it. */
const Units = (description = 'integer string of collateral-token units (USDC, 6 decimals)') => Type.String({ pattern: UINT_DIGITS, description });
const Hash32 = (options: { description?: string } = {}) => HexOut({ pattern: '^0x[0-9a-f]{64}$', ...options });
const AddressOut = (description: string) => HexOut({ pattern: ADDRESS_PATTERN, description });

/** `GET account/proof`: the caller's leaf of the latest liabilities tree and its Merkle path. */
export const AccountProofSchema = Type.Object({
  epoch: Millis({ description: 'the epoch: start of the funding interval, ms since the Unix epoch (the registry key)' }),
  account: Type.String({ description: 'the wallet (lower case)' }),
  leafIndex: Type.Integer({ minimum: 0 }),
  salt: Hash32({ description: 'random per account and epoch; keeps the leaf from being guessed from its parts' }),
  equity: Units('equity committed: the account equity, 0 when it is below zero'),
  pendingWithdrawals: Units('withdrawals reserved and not paid yet'),
  deposited: Nullable(Type.String({ pattern: UINT_DIGITS }), {
    description: "what the vault took from the account as the engine knew it at the snapshot (null in epochs built before 0.2.0): the vault's escape hatch adds what it took since",
  }),
  withdrawn: Nullable(Type.String({ pattern: UINT_DIGITS }), {
    description: "what the vault paid the account as the engine knew it at the snapshot (null before 0.2.0): the escape hatch takes off what it paid since",
  }),
  value: Units("equity + pendingWithdrawals: the leaf's sum"),
  leafHash: Hash32({
    description:
      'keccak256(abi.encode(bytes32 salt, address account, uint256 equity, uint256 pendingWithdrawals, uint256 deposited, uint256 withdrawn)); before 0.2.0 the first four only',
  }),
  path: Type.Array(
    Type.Object({
      hash: Hash32(),
      sum: Units(),
      side: StringEnum(['left', 'right'] as const, { description: 'where the sibling sits' }),
    }),
    { description: 'siblings from the leaf up; node = keccak256(abi.encode(bytes32 leftHash, uint256 leftSum, bytes32 rightHash, uint256 rightSum))' },
  ),
  root: Hash32(),
  total: Units('the liabilities: sum of every leaf'),
  leafCount: Type.Integer({ minimum: 0 }),
  badDebt: Units('negative equity of accounts committed at 0, left out of the total'),
  snapshotTs: Millis({ description: 'when the engine was read' }),
  decimals: Type.Integer({ enum: [6] }),
  chainId: Type.Integer(),
  reserveRegistry: AddressOut('the ReserveRegistry: rootOf(epoch) gives the root and total'),
  vault: AddressOut('the MarginVault holding the reserves'),
  collateralToken: AddressOut("the vault's collateral token (USDC)"),
  txHash: Nullable(HexOut(), { description: 'the transaction that posted the root' }),
  vaultBalance: Nullable(Type.String({ pattern: UINT_DIGITS }), { description: "the vault's collateral-token balance checked after posting (units)" }),
  solvent: Nullable(Type.Boolean(), { description: 'vaultBalance ≥ total at that check' }),
});
export type AccountProof = Static<typeof AccountProofSchema>;
