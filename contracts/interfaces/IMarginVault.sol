// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ICommonErrors} from "./ICommonErrors.sol";
import {IReserveRegistry} from "./IReserveRegistry.sol";

/// @title IMarginVault
/// @notice The perpetual venue's collateral. A user deposits the collateral token (the exchange's
/// USDC) with `deposit`, directly from a wallet or any tool; the `Deposited` event is what the
/// off-chain engine credits the account's margin from. The engine keeps the accounts' margin, PnL
/// and funding off chain, so the vault does not hold per-account balances it could pay against:
/// a withdrawal is paid only against the account's own EIP-712 signature over the request (domain
/// `TokexPerp` / `1` / chain / this vault, the domain of the venue's signed orders), which the
/// operator relays (`payWithdrawal`) after the engine has debited the account. Each withdrawal id is
/// paid at most once, and every payment counts against a cap per period (docs/security.md): the
/// operator key alone moves nothing, and even valid requests cannot empty the vault faster than the
/// cap.
///
/// The escape hatch (docs/security.md, "Perpetual vault escape hatch"): when the operator has been
/// silent for `operatorSilence` (no payment here, no reserves root in the ReserveRegistry), anyone
/// can `freeze` the vault for good, fixing the registry's latest root as the escape root. Each
/// account then takes its own leaf of that root back with `escapeWithdraw`: the leaf's equity and
/// pending withdrawals, plus what the vault took from it since the snapshot, less what it paid it
/// since (both from the vault's own per-account totals against the ones the leaf commits). An
/// account with no leaf in the escape root (it deposited after the snapshot) shows so with its two
/// neighbours in the root's published, account-ordered leaves and takes its deposits back
/// (`escapeUnlisted`). Since 0.3.0 a root's leaves are public on chain (ReserveRegistry
/// `ReserveLeaves`), so a user needs nothing but a node and their keys.
///
/// Forced withdrawals (0.3.0): an account that the operator does not pay files
/// `requestForcedWithdrawal(amount)` on chain. The operator must pay it (`payForcedWithdrawal`) or
/// show from a root posted since that the account holds less (`rejectForcedWithdrawal`) within
/// `operatorSilence()`; past that, anyone can freeze the vault (`freezeOverdue`), as StarkEx's
/// forced operations work: posting roots alone does not keep a censoring venue alive.
interface IMarginVault is ICommonErrors {
    /// @notice One leaf of the escape root and its path: a neighbour in `escapeUnlisted`, the
    /// account's own in `rejectForcedWithdrawal`.
    struct LeafProof {
        IReserveRegistry.Leaf leaf;
        ProofStep[] path;
    }

    /// @notice An account's open forced withdrawal: `amount` collateral-token units asked on chain at
    /// `requestedAt` (unix seconds; 0: none).
    struct ForcedWithdrawal {
        uint128 amount;
        uint64 requestedAt;
    }

    /// @notice One step of a Merkle-sum path: the sibling's hash and sum, and whether the sibling
    /// is the left child (node = H(sibling, current)) or the right one.
    struct ProofStep {
        bytes32 hash;
        uint256 sum;
        bool left;
    }

    /// @notice A withdrawal as the account signs it (EIP-712 type `Withdrawal`).
    /// @param account Whose withdrawal it is: the signer (an EOA, or an ERC-1271 wallet).
    /// @param recipient Who is paid.
    /// @param amount Collateral-token units.
    /// @param withdrawalId The engine's id of the withdrawal, paid at most once.
    /// @param deadline Unix seconds after which the request can no longer be paid.
    struct WithdrawalRequest {
        address account;
        address recipient;
        uint256 amount;
        bytes32 withdrawalId;
        uint64 deadline;
    }

    /// @notice `account` has approved the vault for `allowance` only, less than the `needed` amount.
    error InsufficientAllowance(address account, uint256 allowance, uint256 needed);
    /// @notice The vault holds `available` collateral, less than the `needed` payout.
    error InsufficientVaultBalance(uint256 available, uint256 needed);
    /// @notice The withdrawal `withdrawalId` was paid already.
    error WithdrawalAlreadyPaid(bytes32 withdrawalId);
    /// @notice A withdrawal id of zero (the "no id" value) was given.
    error ZeroWithdrawalId();
    /// @notice The request's `deadline` has passed.
    error WithdrawalExpired(uint64 deadline);
    /// @notice The signature is not `account`'s over the request.
    error InvalidWithdrawalSignature(address account);
    /// @notice Paying `needed` would take this period's payments past the cap: `available` is left
    /// until the period that starts at `nextPeriodStart`.
    error WithdrawalCapExceeded(uint256 available, uint256 needed, uint64 nextPeriodStart);
    /// @notice `amount` is more than the whole cap of a period (`cap`): it can never be paid as one
    /// withdrawal (ask for less, in several).
    error WithdrawalAboveCap(uint256 amount, uint256 cap);
    /// @notice A cap period of zero.
    error InvalidWithdrawalPeriod();
    /// @notice `caller` is neither the guardian nor the owner.
    error NotGuardian(address caller);
    /// @notice The vault is frozen: the escape hatch pays, nothing else moves collateral.
    error VaultFrozen();
    /// @notice The vault is not frozen: the operator's path serves withdrawals.
    error VaultNotFrozen();
    /// @notice The operator was active within the silence period: `freeze` is possible from `openAt` (unix seconds).
    error OperatorNotSilent(uint256 openAt);
    /// @notice No reserves registry is set, or it holds no root yet: there is nothing to escape against.
    error NoReservesRoot();
    /// @notice The leaf and path do not lead to the escape root and total.
    error InvalidEscapeProof();
    /// @notice The leaf gives the caller nothing more: taken already, or nothing was owed.
    error NothingToEscape(address account);
    /// @notice The operator silence must be 1 to 30 days.
    error InvalidOperatorSilence(uint32 silence);
    /// @notice The neighbours given do not show that the caller has no leaf in the escape root (they
    /// are not adjacent leaves around the caller's address, or the root's leaves were not published
    /// in account order: a root posted before 0.3.0).
    error InvalidAbsenceProof();
    /// @notice `account` has a forced withdrawal open already (one at a time).
    error ForcedWithdrawalPending(address account);
    /// @notice `account` has no open forced withdrawal.
    error NoForcedWithdrawal(address account);
    /// @notice Only an account the vault has taken deposits from can file a forced withdrawal.
    error NothingDeposited(address account);
    /// @notice The forced withdrawal of `account` is due at `dueAt` (unix seconds), not before.
    error ForcedWithdrawalNotDue(address account, uint256 dueAt);
    /// @notice A rejection needs a root posted after the request (`requestedAt`); the latest was posted at `postedAt`.
    error RootBeforeRequest(uint256 postedAt, uint256 requestedAt);
    /// @notice The leaf shows `available` for the account, not less than the `amount` asked: it must be paid.
    error ForcedWithdrawalCovered(uint256 available, uint256 amount);

    /// @notice `account` deposited `amount` collateral-token units; the engine credits its margin.
    event Deposited(address indexed account, uint256 amount);
    /// @notice The operator paid `amount` collateral-token units to `account` for the engine's withdrawal `withdrawalId`.
    event Withdrawn(address indexed account, uint256 amount, bytes32 indexed withdrawalId);
    event OperatorSet(address indexed operator, bool enabled);
    /// @notice The withdrawal `withdrawalId` was paid to `recipient`, another address than its account.
    event WithdrawalRecipient(bytes32 indexed withdrawalId, address indexed recipient);
    /// @notice The owner set the cap: at most `cap` collateral-token units paid per `period` seconds.
    event WithdrawalCapSet(uint256 cap, uint64 period);
    /// @notice This period's payments reached 90 % of the cap (once a period): the alert an operator
    /// watches before withdrawals start waiting for the next period.
    event WithdrawalCapNearlyReached(uint64 periodStart, uint256 withdrawn, uint256 cap);
    /// @notice The owner named the guardian (zero: none), who can pause and unpause payments.
    event GuardianSet(address indexed guardian);
    /// @notice `by` (the guardian or the owner) paused the operator's payments.
    event VaultPausedBy(address indexed by);
    /// @notice `by` (the guardian or the owner) lifted the pause.
    event VaultUnpausedBy(address indexed by);
    /// @notice The owner set the registry whose roots the escape hatch pays against.
    event ReserveRegistrySet(address indexed registry);
    /// @notice The owner set the operator silence after which the vault can be frozen.
    event OperatorSilenceSet(uint32 silence);
    /// @notice `by` froze the vault for good after the operator's silence; escapes pay against the
    /// registry's record of `epoch` (`root`, `total`).
    event VaultFrozenBy(address indexed by, uint64 indexed epoch, bytes32 root, uint256 total);
    /// @notice `account` took `amount` collateral-token units back through the escape hatch, against the root of `epoch`.
    event EscapeWithdrawn(address indexed account, uint256 amount, uint64 indexed epoch);
    /// @notice `account` asked on chain for `amount`; unless paid or rejected by `dueAt`, anyone can freeze the vault.
    event ForcedWithdrawalRequested(address indexed account, uint256 amount, uint256 dueAt);
    /// @notice The operator paid `account`'s forced withdrawal (a `Withdrawn` event with the id is emitted too).
    event ForcedWithdrawalPaid(address indexed account, uint256 amount, bytes32 indexed withdrawalId);
    /// @notice The operator showed from the root of `epoch` that `account` holds `available`, less than the `amount` asked.
    event ForcedWithdrawalRejected(address indexed account, uint256 amount, uint256 available, uint64 indexed epoch);
    /// @notice `account` withdrew its own forced request.
    event ForcedWithdrawalCancelled(address indexed account);

    // ------------------------------------------------------------------ Admin

    /// @notice Grants or revokes the operator right (relaying signed withdrawals). Owner only.
    function setOperator(address operator, bool enabled) external;

    /// @notice At most `cap` collateral-token units at once, refilled continuously at `cap` per
    /// `period` seconds (a token bucket, since 0.3.0: over any window of `t` seconds at most
    /// `cap + cap * t / period` leaves, where fixed windows let twice the cap out within seconds of a
    /// window's edge). A new vault's cap is zero: it pays nothing until the owner sets one. The
    /// bucket's level carries over a change. Owner only.
    function setWithdrawalCap(uint256 cap, uint64 period) external;

    /// @notice Names the guardian (zero: none). Owner only.
    function setGuardian(address guardian_) external;

    /// @notice Stops the operator's payments (`VenuePaused`) until `unpause`. Deposits go on, and the
    /// silence that opens the escape hatch keeps running. Guardian or owner.
    function pause() external;

    /// @notice Lifts the pause. Guardian or owner.
    function unpause() external;

    /// @notice Sets the ReserveRegistry whose latest root `freeze` fixes as the escape root, and starts
    /// the silence clock afresh (`lastOperatorActivity` = now). Owner only.
    function setReserveRegistry(address registry) external;

    /// @notice Sets the operator silence (seconds, 1 to 30 days; 0 was the default, 3 days) after
    /// which anyone can freeze the vault. Owner only.
    function setOperatorSilence(uint32 silence) external;

    // ------------------------------------------------------------------- User

    /// @notice Takes `amount` collateral-token units from the caller (who must have approved the
    /// vault for it) and credits the caller. Reverts `ZeroAmount` for zero, `InsufficientAllowance`
    /// without the approval, `VaultFrozen` once frozen.
    function deposit(uint256 amount) external;

    /// @notice Freezes the vault for good once the operator has been silent for `operatorSilence`
    /// (no payment here and no root posted to the registry since): the registry's latest root
    /// becomes the escape root, payments and deposits stop, `escapeWithdraw` opens. Anyone may call
    /// it (`OperatorNotSilent` before the silence has run, `NoReservesRoot` without a root).
    function freeze() external;

    /// @notice Freezes the vault as `freeze` does, once `account`'s forced withdrawal is overdue
    /// (neither paid nor rejected within `operatorSilence()` of its request). Anyone may call it.
    function freezeOverdue(address account) external;

    /// @notice Pays the caller, who has no leaf in the escape root, what the vault took from it less
    /// what it paid it (`depositedOf - withdrawnOf`): deposits the engine had not credited at the
    /// snapshot. `neighbours` are the leaves next to the caller's address in the root's account order
    /// with their paths: the one below and the one above (adjacent indexes), only the one above when
    /// the caller sorts first, only the one below when last, none for a root of no leaf
    /// (`InvalidAbsenceProof` otherwise). Only once frozen, and only against a root posted with its
    /// leaves (0.3.0); counts in `withdrawnOf`, so it pays once.
    function escapeUnlisted(LeafProof[] calldata neighbours) external;

    /// @notice Files the caller's forced withdrawal of `amount` (one open at a time; only an account
    /// that deposited). Due `operatorSilence()` later.
    function requestForcedWithdrawal(uint256 amount) external;

    /// @notice Withdraws the caller's own open forced request.
    function cancelForcedWithdrawal() external;

    /// @notice Pays `account`'s forced withdrawal to the account itself under the engine's
    /// `withdrawalId` (paid once; counts against the cap; `VenuePaused` while paused). Operator only:
    /// the engine debits the account first.
    function payForcedWithdrawal(address account, bytes32 withdrawalId) external;

    /// @notice Closes `account`'s forced withdrawal without paying: `proof` is the account's leaf in
    /// the registry's latest root, posted after the request, and shows it holds less than it asked
    /// (`equity` plus what the vault took from it since the snapshot less what it paid it since).
    /// Operator only.
    function rejectForcedWithdrawal(address account, LeafProof calldata proof) external;

    /// @notice `account`'s open forced withdrawal (zeros: none) and when it falls due.
    function forcedWithdrawal(address account) external view returns (uint256 amount, uint64 requestedAt, uint256 dueAt);

    /// @notice Pays the caller its leaf of the escape root: `equity + pendingWithdrawals` of the leaf,
    /// plus `depositedOf(caller) - deposited`, less `withdrawnOf(caller) - withdrawn` (never below
    /// zero). The leaf is `keccak256(abi.encode(salt, caller, equity, pendingWithdrawals, deposited,
    /// withdrawn))` and `path` leads from it to the escape root and total (the API's `GET
    /// account/proof`). What it pays counts in `withdrawnOf`, so a second call pays only what was
    /// deposited since. Only once frozen (`VaultNotFrozen`); not capped.
    function escapeWithdraw(
        bytes32 salt,
        uint256 equity,
        uint256 pendingWithdrawals,
        uint256 deposited,
        uint256 withdrawn,
        ProofStep[] calldata path
    ) external;

    // --------------------------------------------------------------- Operator

    /// @notice Pays `request.amount` collateral-token units to `request.recipient` for the engine's
    /// withdrawal `request.withdrawalId`, which must not have been paid before, against
    /// `request.account`'s signature of the request (`WithdrawalExpired` after its deadline,
    /// `InvalidWithdrawalSignature` for any other signer, `WithdrawalCapExceeded` past this period's
    /// cap). Operator only: the engine debits the account before the operator relays.
    function payWithdrawal(WithdrawalRequest calldata request, bytes calldata signature) external;

    // ------------------------------------------------------------------ Views

    /// @notice The ERC-20 the vault takes and pays (immutable).
    function collateralToken() external view returns (address);
    function isOperator(address account) external view returns (bool);
    /// @notice Whether the withdrawal `withdrawalId` has been paid.
    function withdrawalPaid(bytes32 withdrawalId) external view returns (bool);
    /// @notice Collateral-token units `account` has deposited, in total.
    function depositedOf(address account) external view returns (uint256);
    /// @notice Collateral-token units paid to `account` by withdrawals, in total.
    function withdrawnOf(address account) external view returns (uint256);
    /// @notice Collateral-token units deposited by every account, in total.
    function totalDeposited() external view returns (uint256);
    /// @notice Collateral-token units paid by every withdrawal, in total.
    function totalWithdrawn() external view returns (uint256);
    /// @notice The cap, its period, and the bucket's level now: `withdrawnInPeriod` is what counts
    /// against the cap at `periodStart` (this block's time; since 0.3.0 the cap is a token bucket).
    function withdrawalCap()
        external
        view
        returns (uint256 cap, uint64 period, uint64 periodStart, uint256 withdrawnInPeriod);
    /// @notice The EIP-712 digest the account signs for `request`.
    function withdrawalDigest(WithdrawalRequest calldata request) external view returns (bytes32);
    function guardian() external view returns (address);
    function paused() external view returns (bool);
    function reserveRegistry() external view returns (address);
    /// @notice Seconds of operator silence after which the vault can be frozen.
    function operatorSilence() external view returns (uint32);
    /// @notice When the operator last paid a withdrawal, or the owner set the registry (unix seconds).
    function lastOperatorActivity() external view returns (uint64);
    /// @notice When `freeze` becomes possible (unix seconds): the later of the last payment and the
    /// registry's last post, plus the silence. 0 without a registry or a root.
    function freezableAt() external view returns (uint256);
    /// @notice The escape root fixed by `freeze` (epoch 0 while not frozen).
    function escapeRoot() external view returns (uint64 epoch, bytes32 root, uint256 total, uint64 frozenAt);

    /// @notice An account's totals of the earlier vault were carried over.
    event AccountMigrated(address indexed account, uint256 deposited, uint256 withdrawn);

    /// @notice Carries each account's deposited and withdrawn totals over, once per account. Only the upgrader, only while
    /// the migration window is open; the collateral itself is moved in by the earlier vault's operator.
    function migrateAccounts(address[] calldata accounts, uint256[] calldata deposited, uint256[] calldata withdrawn)
        external;

    /// @notice Marks the earlier vault's paid withdrawal ids paid here too, so none is paid twice.
    /// Only the upgrader, only while the migration window is open.
    function migrateWithdrawalsPaid(bytes32[] calldata withdrawalIds) external;
}
