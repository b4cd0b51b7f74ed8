// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {OwnableUpgradeable} from "@openzeppelin/contracts-upgradeable/access/OwnableUpgradeable.sol";
import {Ownable2StepUpgradeable} from "@openzeppelin/contracts-upgradeable/access/Ownable2StepUpgradeable.sol";
import {VenueUpgradeable} from "./VenueUpgradeable.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {EIP712Upgradeable} from "@openzeppelin/contracts-upgradeable/utils/cryptography/EIP712Upgradeable.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {IMarginVault} from "./interfaces/IMarginVault.sol";
import {IReserveRegistry} from "./interfaces/IReserveRegistry.sol";
import {ReservesTree} from "./libraries/ReservesTree.sol";

/// @title MarginVault
/// @notice The perpetual venue's collateral vault; see {IMarginVault}.
contract MarginVault is
    IMarginVault,
    VenueUpgradeable,
    EIP712Upgradeable,
    Ownable2StepUpgradeable,
    ReentrancyGuardTransient
{
    using SafeERC20 for IERC20;

    /// @notice The EIP-712 type of a withdrawal request (see {IMarginVault-WithdrawalRequest}).
    bytes32 public constant WITHDRAWAL_TYPEHASH = keccak256(
        "Withdrawal(address account,address recipient,uint256 amount,bytes32 withdrawalId,uint64 deadline)"
    );

    uint32 private constant DEFAULT_OPERATOR_SILENCE = 3 days;
    uint32 private constant MIN_OPERATOR_SILENCE = 1 days;
    uint32 private constant MAX_OPERATOR_SILENCE = 30 days;
    /// @dev Values and sums of the reserves tree stay below 2^128 (src/perp/reserves/merkle-sum-tree.ts).
    uint256 private constant MAX_SUM = 1 << 128;

    // ----------------------------------------------------------------- State

    /// @inheritdoc IMarginVault
    /// @dev Fixed per venue, so an immutable of the implementation rather than a storage read on every
    /// deposit; an upgrade constructs the new implementation with the proxy's `collateralToken()`.
    /// @custom:oz-upgrades-unsafe-allow state-variable-immutable
    address public immutable collateralToken;
    /// @inheritdoc IMarginVault
    mapping(address account => bool) public isOperator;
    /// @inheritdoc IMarginVault
    mapping(bytes32 withdrawalId => bool) public withdrawalPaid;
    /// @inheritdoc IMarginVault
    mapping(address account => uint256) public depositedOf;
    /// @inheritdoc IMarginVault
    mapping(address account => uint256) public withdrawnOf;
    /// @inheritdoc IMarginVault
    uint256 public totalDeposited;
    /// @inheritdoc IMarginVault
    uint256 public totalWithdrawn;
    /// @dev Accounts already migrated: a rerun after a crash counts nobody twice.
    mapping(address account => bool) private _migrated;
    /// @dev The cap on payments per period (zero: nothing is paid) and the period's running total.
    uint256 private _withdrawalCap;
    uint256 private _withdrawnInPeriod;
    uint64 private _withdrawalPeriod;
    uint64 private _periodStart;
    /// @dev Unused since 0.3.0 (the token bucket alerts on each crossing of 90 %).
    bool private _capAlerted;
    // Appended in 0.2.0 (issue 43, the escape hatch); every zero value is the safe default, so a
    // vault upgraded from an implementation without them starts with the hatch shut until silence.
    /// @dev When the operator last paid (unix seconds). In the cap's slot, which a payment writes already.
    uint64 private _lastOperatorActivity;
    bool private _paused;
    address private _guardian;
    /// @dev 0: DEFAULT_OPERATOR_SILENCE.
    uint32 private _operatorSilence;
    IReserveRegistry private _registry;
    /// @dev Set once by `freeze` (unix seconds), never cleared.
    uint64 private _frozenAt;
    uint64 private _escapeEpoch;
    bytes32 private _escapeRoot;
    uint256 private _escapeTotal;
    // Appended in 0.3.0 (issue 60); zero is the safe default for a vault upgraded in place.
    /// @dev The frozen record's leaf count, and whether its leaves were published in account order
    /// (only then can an account show it has none).
    uint64 private _escapeLeafCount;
    bool private _escapeLeavesSorted;
    /// @dev The cap's token bucket was last brought up to date at this time (0: still the fixed
    /// window's total of a vault upgraded from 0.2.0, counted in full once).
    uint64 private _bucketAt;
    mapping(address account => ForcedWithdrawal) private _forced;

    modifier onlyOperator() {
        if (!isOperator[msg.sender]) revert NotOperator(msg.sender);
        _;
    }

    modifier onlyGuardianOrOwner() {
        if (msg.sender != _guardian && msg.sender != owner()) revert NotGuardian(msg.sender);
        _;
    }

    modifier notFrozen() {
        if (_frozenAt != 0) revert VaultFrozen();
        _;
    }

    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor(address collateralToken_) {
        if (collateralToken_ == address(0)) revert ZeroAddress();
        collateralToken = collateralToken_;
    }

    /// @notice Sets up the proxy: the owner of the configuration and the upgrade authority
    /// (docs/upgrades.md); `migrating_` opens the migration window (false for a new venue).
    function initialize(address initialOwner, address upgrader_, bool migrating_) external initializer {
        __VenueUpgradeable_init(upgrader_, migrating_);
        // The domain of the venue's signed orders and API keys (packages/contract perp-typed-data.ts).
        __EIP712_init("TokexPerp", "1");
        __Ownable_init(initialOwner);
    }

    // ----------------------------------------------------------------- Admin

    /// @inheritdoc IMarginVault
    function setOperator(address operator, bool enabled) external onlyOwner {
        if (operator == address(0)) revert ZeroAddress();
        isOperator[operator] = enabled;
        emit OperatorSet(operator, enabled);
    }

    /// @inheritdoc IMarginVault
    function setWithdrawalCap(uint256 cap, uint64 period) external onlyOwner {
        if (period == 0) revert InvalidWithdrawalPeriod();
        // The level carries over, brought up to now under the old setting: a change never empties
        // the bucket (lowering the cap below the level stops payments until it drains).
        uint64 oldPeriod = _withdrawalPeriod;
        _withdrawnInPeriod = oldPeriod == 0 ? 0 : _bucketLevel(_withdrawalCap, oldPeriod);
        _bucketAt = uint64(block.timestamp);
        _periodStart = uint64(block.timestamp);
        _withdrawalCap = cap;
        _withdrawalPeriod = period;
        emit WithdrawalCapSet(cap, period);
    }

    /// @inheritdoc IMarginVault
    function setGuardian(address guardian_) external onlyOwner {
        _guardian = guardian_;
        emit GuardianSet(guardian_);
    }

    /// @inheritdoc IMarginVault
    function pause() external onlyGuardianOrOwner {
        _paused = true;
        emit VaultPausedBy(msg.sender);
    }

    /// @inheritdoc IMarginVault
    function unpause() external onlyGuardianOrOwner {
        _paused = false;
        emit VaultUnpausedBy(msg.sender);
    }

    /// @inheritdoc IMarginVault
    function setReserveRegistry(address registry) external onlyOwner {
        if (registry == address(0)) revert ZeroAddress();
        _registry = IReserveRegistry(registry);
        // The silence is counted from here at the earliest: a vault upgraded to the hatch, whose
        // registry holds roots posted before it recorded their time, must not be freezable at once.
        _lastOperatorActivity = uint64(block.timestamp);
        emit ReserveRegistrySet(registry);
    }

    /// @inheritdoc IMarginVault
    function setOperatorSilence(uint32 silence) external onlyOwner {
        if (silence < MIN_OPERATOR_SILENCE || silence > MAX_OPERATOR_SILENCE) revert InvalidOperatorSilence(silence);
        _operatorSilence = silence;
        emit OperatorSilenceSet(silence);
    }

    // ------------------------------------------------------------------ User

    /// @inheritdoc IMarginVault
    function deposit(uint256 amount) external onlyViaProxy nonReentrant notFrozen {
        if (amount == 0) revert ZeroAmount();
        IERC20 token = IERC20(collateralToken);
        // Checked here so that a wallet sees the vault's own error, not the token's.
        uint256 allowance = token.allowance(msg.sender, address(this));
        if (allowance < amount) revert InsufficientAllowance(msg.sender, allowance, amount);
        depositedOf[msg.sender] += amount;
        totalDeposited += amount;
        token.safeTransferFrom(msg.sender, address(this), amount);
        emit Deposited(msg.sender, amount);
    }

    // -------------------------------------------------------------- Operator

    /// @inheritdoc IMarginVault
    function payWithdrawal(WithdrawalRequest calldata request, bytes calldata signature)
        external
        onlyOperator
        nonReentrant
    {
        if (_paused) revert VenuePaused();
        if (_frozenAt != 0) revert VaultFrozen();
        address account = request.account;
        address recipient = request.recipient;
        uint256 amount = request.amount;
        bytes32 withdrawalId = request.withdrawalId;
        if (account == address(0) || recipient == address(0)) revert ZeroAddress();
        if (amount == 0) revert ZeroAmount();
        if (withdrawalId == bytes32(0)) revert ZeroWithdrawalId();
        if (withdrawalPaid[withdrawalId]) revert WithdrawalAlreadyPaid(withdrawalId);
        if (block.timestamp > request.deadline) revert WithdrawalExpired(request.deadline);
        // EOAs by ECDSA, contract wallets by ERC-1271: the operator's key signs for nobody.
        if (!SignatureChecker.isValidSignatureNow(account, _withdrawalDigest(request), signature)) {
            revert InvalidWithdrawalSignature(account);
        }
        _payOut(account, recipient, amount, withdrawalId);
        if (recipient != account) emit WithdrawalRecipient(withdrawalId, recipient);
    }

    /// @dev The operator's payment, both ways (signed and forced): within the cap, once per id, and
    /// it counts as the operator's activity.
    function _payOut(address account, address recipient, uint256 amount, bytes32 withdrawalId) private {
        _countAgainstCap(amount);
        IERC20 token = IERC20(collateralToken);
        uint256 available = token.balanceOf(address(this));
        if (available < amount) revert InsufficientVaultBalance(available, amount);
        withdrawalPaid[withdrawalId] = true;
        _lastOperatorActivity = uint64(block.timestamp);
        withdrawnOf[account] += amount;
        totalWithdrawn += amount;
        token.safeTransfer(recipient, amount);
        emit Withdrawn(account, amount, withdrawalId);
    }

    // ------------------------------------------------------------ Escape hatch

    /// @inheritdoc IMarginVault
    function freeze() external notFrozen {
        uint256 openAt = freezableAt();
        if (openAt == 0) revert NoReservesRoot();
        if (block.timestamp < openAt) revert OperatorNotSilent(openAt);
        _freeze();
    }

    /// @inheritdoc IMarginVault
    function freezeOverdue(address account) external notFrozen {
        ForcedWithdrawal memory f = _forced[account];
        if (f.requestedAt == 0) revert NoForcedWithdrawal(account);
        uint256 dueAt = uint256(f.requestedAt) + operatorSilence();
        if (block.timestamp < dueAt) revert ForcedWithdrawalNotDue(account, dueAt);
        if (address(_registry) == address(0) || _registry.epochCount() == 0) revert NoReservesRoot();
        _freeze();
    }

    function _freeze() private {
        IReserveRegistry registry = _registry;
        IReserveRegistry.ReserveRecord memory r = registry.latest();
        _frozenAt = uint64(block.timestamp);
        _escapeEpoch = r.epoch;
        _escapeRoot = r.root;
        _escapeTotal = r.total;
        _escapeLeafCount = r.leafCount;
        // A registry without the view (before 0.3.0) must not be able to stop the freeze.
        try registry.leavesPublished(r.epoch) returns (bool sorted) {
            _escapeLeavesSorted = sorted;
        } catch {}
        emit VaultFrozenBy(msg.sender, r.epoch, r.root, r.total);
    }

    /// @inheritdoc IMarginVault
    function escapeWithdraw(
        bytes32 salt,
        uint256 equity,
        uint256 pendingWithdrawals,
        uint256 deposited,
        uint256 withdrawn,
        ProofStep[] calldata path
    ) external nonReentrant {
        if (_frozenAt == 0) revert VaultNotFrozen();
        address account = msg.sender;
        if (equity >= MAX_SUM || pendingWithdrawals >= MAX_SUM) revert InvalidEscapeProof();
        uint256 value = equity + pendingWithdrawals;
        bytes32 hash = keccak256(abi.encode(salt, account, equity, pendingWithdrawals, deposited, withdrawn));
        (bool ok, bytes32 root, uint256 sum,) = ReservesTree.walk(hash, value, path);
        if (!ok || root != _escapeRoot || sum != _escapeTotal) revert InvalidEscapeProof();
        // What the vault took from the account since the snapshot comes back, what it paid since
        // is taken off: the per-account totals are the vault's own, the leaf commits the engine's.
        uint256 credit = value + depositedOf[account] + withdrawn;
        uint256 debit = deposited + withdrawnOf[account];
        if (credit <= debit) revert NothingToEscape(account);
        _payEscape(account, credit - debit);
    }

    /// @inheritdoc IMarginVault
    function escapeUnlisted(LeafProof[] calldata neighbours) external nonReentrant {
        if (_frozenAt == 0) revert VaultNotFrozen();
        address account = msg.sender;
        if (!_escapeLeavesSorted || !_absent(account, neighbours)) revert InvalidAbsenceProof();
        // No leaf: the engine never credited the account, so everything it put in and was not paid
        // back is still its own.
        uint256 deposited = depositedOf[account];
        uint256 paid = withdrawnOf[account];
        if (deposited <= paid) revert NothingToEscape(account);
        _payEscape(account, deposited - paid);
    }

    function _payEscape(address account, uint256 amount) private {
        IERC20 token = IERC20(collateralToken);
        uint256 available = token.balanceOf(address(this));
        if (available < amount) revert InsufficientVaultBalance(available, amount);
        withdrawnOf[account] += amount;
        totalWithdrawn += amount;
        token.safeTransfer(account, amount);
        emit EscapeWithdrawn(account, amount, _escapeEpoch);
    }

    /// @dev Whether `neighbours` show that `account` has no leaf in the escape root, whose leaves are
    /// strictly increasing by account (the registry checked it): the leaf just below the account and
    /// the one just above it sit at adjacent indexes, or the account sorts before the first or after
    /// the last leaf, or the root has no leaf at all.
    function _absent(address account, LeafProof[] calldata neighbours) private view returns (bool) {
        uint256 count = _escapeLeafCount;
        if (neighbours.length == 0) return count == 0;
        if (neighbours.length > 2) return false;
        (bool okA, address a, uint256 ia) = _leafAt(neighbours[0]);
        if (!okA) return false;
        if (neighbours.length == 1) {
            // Alone: the first leaf sorting above the account, or the last sorting below it.
            if (uint160(a) > uint160(account)) return ia == 0;
            return uint160(a) < uint160(account) && ia + 1 == count;
        }
        (bool okB, address b, uint256 ib) = _leafAt(neighbours[1]);
        return okB && uint160(a) < uint160(account) && uint160(account) < uint160(b) && ib == ia + 1;
    }

    /// @dev A leaf of the escape root: its account and index, if the path leads to the root.
    function _leafAt(LeafProof calldata p) private view returns (bool, address, uint256) {
        IReserveRegistry.Leaf calldata l = p.leaf;
        if (l.equity >= MAX_SUM || l.pendingWithdrawals >= MAX_SUM) return (false, address(0), 0);
        (bool ok, bytes32 root, uint256 sum, uint256 index) =
            ReservesTree.walk(ReservesTree.leafHash(l), l.equity + l.pendingWithdrawals, p.path);
        if (!ok || root != _escapeRoot || sum != _escapeTotal || index >= _escapeLeafCount) return (false, address(0), 0);
        return (true, l.account, index);
    }

    // ------------------------------------------------------- Forced withdrawals

    /// @inheritdoc IMarginVault
    function requestForcedWithdrawal(uint256 amount) external notFrozen {
        address account = msg.sender;
        if (amount == 0) revert ZeroAmount();
        if (amount >= MAX_SUM) revert AmountTooLarge(amount);
        if (_forced[account].requestedAt != 0) revert ForcedWithdrawalPending(account);
        if (depositedOf[account] == 0) revert NothingDeposited(account);
        _forced[account] = ForcedWithdrawal({amount: uint128(amount), requestedAt: uint64(block.timestamp)});
        emit ForcedWithdrawalRequested(account, amount, block.timestamp + operatorSilence());
    }

    /// @inheritdoc IMarginVault
    function cancelForcedWithdrawal() external {
        if (_forced[msg.sender].requestedAt == 0) revert NoForcedWithdrawal(msg.sender);
        delete _forced[msg.sender];
        emit ForcedWithdrawalCancelled(msg.sender);
    }

    /// @inheritdoc IMarginVault
    function payForcedWithdrawal(address account, bytes32 withdrawalId) external onlyOperator nonReentrant {
        if (_paused) revert VenuePaused();
        if (_frozenAt != 0) revert VaultFrozen();
        ForcedWithdrawal memory f = _forced[account];
        if (f.requestedAt == 0) revert NoForcedWithdrawal(account);
        if (withdrawalId == bytes32(0)) revert ZeroWithdrawalId();
        if (withdrawalPaid[withdrawalId]) revert WithdrawalAlreadyPaid(withdrawalId);
        delete _forced[account];
        // Only ever to the account itself: its own request on chain is the authorisation.
        _payOut(account, account, f.amount, withdrawalId);
        emit ForcedWithdrawalPaid(account, f.amount, withdrawalId);
    }

    /// @inheritdoc IMarginVault
    function rejectForcedWithdrawal(address account, LeafProof calldata proof) external onlyOperator {
        if (_frozenAt != 0) revert VaultFrozen();
        ForcedWithdrawal memory f = _forced[account];
        if (f.requestedAt == 0) revert NoForcedWithdrawal(account);
        IReserveRegistry registry = _registry;
        if (address(registry) == address(0) || registry.epochCount() == 0) revert NoReservesRoot();
        uint256 postedAt = registry.lastPostedAt();
        if (postedAt < f.requestedAt) revert RootBeforeRequest(postedAt, f.requestedAt);
        IReserveRegistry.ReserveRecord memory r = registry.latest();
        IReserveRegistry.Leaf calldata l = proof.leaf;
        if (l.account != account || l.equity >= MAX_SUM || l.pendingWithdrawals >= MAX_SUM) revert InvalidEscapeProof();
        (bool ok, bytes32 root, uint256 sum,) =
            ReservesTree.walk(ReservesTree.leafHash(l), l.equity + l.pendingWithdrawals, proof.path);
        if (!ok || root != r.root || sum != r.total) revert InvalidEscapeProof();
        // What the account could take: its equity at the snapshot, plus what the vault took from it
        // since, less what the vault paid it since (pending withdrawals are on their way already).
        uint256 credit = l.equity + depositedOf[account] + l.withdrawn;
        uint256 debit = l.deposited + withdrawnOf[account];
        uint256 available = credit > debit ? credit - debit : 0;
        if (available >= f.amount) revert ForcedWithdrawalCovered(available, f.amount);
        delete _forced[account];
        emit ForcedWithdrawalRejected(account, f.amount, available, r.epoch);
    }

    // ----------------------------------------------------------------- Views

    /// @inheritdoc IMarginVault
    function guardian() external view returns (address) {
        return _guardian;
    }

    /// @inheritdoc IMarginVault
    function paused() external view returns (bool) {
        return _paused;
    }

    /// @inheritdoc IMarginVault
    function reserveRegistry() external view returns (address) {
        return address(_registry);
    }

    /// @inheritdoc IMarginVault
    function operatorSilence() public view returns (uint32) {
        uint32 silence = _operatorSilence;
        return silence == 0 ? DEFAULT_OPERATOR_SILENCE : silence;
    }

    /// @inheritdoc IMarginVault
    function lastOperatorActivity() external view returns (uint64) {
        return _lastOperatorActivity;
    }

    /// @inheritdoc IMarginVault
    function freezableAt() public view returns (uint256) {
        IReserveRegistry registry = _registry;
        if (address(registry) == address(0) || registry.epochCount() == 0) return 0;
        uint256 last = registry.lastPostedAt();
        if (_lastOperatorActivity > last) last = _lastOperatorActivity;
        return last + operatorSilence();
    }

    /// @inheritdoc IMarginVault
    function escapeRoot() external view returns (uint64 epoch, bytes32 root, uint256 total, uint64 frozenAt) {
        return (_escapeEpoch, _escapeRoot, _escapeTotal, _frozenAt);
    }

    /// @inheritdoc IMarginVault
    function withdrawalCap()
        external
        view
        returns (uint256 cap, uint64 period, uint64 periodStart, uint256 withdrawnInPeriod)
    {
        cap = _withdrawalCap;
        period = _withdrawalPeriod;
        if (period == 0) return (cap, 0, 0, 0);
        return (cap, period, uint64(block.timestamp), _bucketLevel(cap, period));
    }

    /// @inheritdoc IMarginVault
    function forcedWithdrawal(address account) external view returns (uint256 amount, uint64 requestedAt, uint256 dueAt) {
        ForcedWithdrawal memory f = _forced[account];
        if (f.requestedAt == 0) return (0, 0, 0);
        return (f.amount, f.requestedAt, uint256(f.requestedAt) + operatorSilence());
    }

    /// @inheritdoc IMarginVault
    function withdrawalDigest(WithdrawalRequest calldata request) external view returns (bytes32) {
        return _withdrawalDigest(request);
    }

    /// @notice The EIP-712 domain separator (`TokexPerp` / `1` / chain / this vault).
    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    // -------------------------------------------------------------- Internal

    function _withdrawalDigest(WithdrawalRequest calldata r) private view returns (bytes32) {
        return _hashTypedDataV4(
            keccak256(abi.encode(WITHDRAWAL_TYPEHASH, r.account, r.recipient, r.amount, r.withdrawalId, r.deadline))
        );
    }

    /// @dev What counts against the cap now: the bucket's level drained at `cap` per `period` since
    /// it was last written. A vault upgraded from 0.2.0 holds the fixed window's total instead
    /// (`_bucketAt` 0): it counts in full while that window lasts, never less than what was paid.
    function _bucketLevel(uint256 cap, uint64 period) private view returns (uint256) {
        uint256 level = _withdrawnInPeriod;
        uint64 at = _bucketAt;
        if (at == 0) return _periodStart == uint64(block.timestamp / period) * period ? level : 0;
        uint256 drained = (cap * (block.timestamp - at)) / period;
        return level > drained ? level - drained : 0;
    }

    /// @dev A token bucket of `cap`, refilled at `cap` per `period`: a payment past the level waits
    /// (the relayer retries), so a leaked signing path drains at most the cap at once and the cap
    /// per period after it, with no window edge to double it at.
    function _countAgainstCap(uint256 amount) private {
        uint64 period = _withdrawalPeriod;
        uint256 cap = _withdrawalCap;
        if (amount > cap) revert WithdrawalAboveCap(amount, cap);
        uint256 level = period == 0 ? _withdrawnInPeriod : _bucketLevel(cap, period);
        uint256 available = cap - (level < cap ? level : cap);
        if (amount > available) {
            // When enough has drained for `amount` (rounded up to the second); a 0.2.0 window's
            // total counts until the window ends, and drains from then on.
            uint256 wait = period == 0 ? 0 : ((level + amount - cap) * period + cap - 1) / cap;
            if (period != 0 && _bucketAt == 0) wait = uint256(_periodStart) + period - block.timestamp;
            revert WithdrawalCapExceeded(available, amount, uint64(block.timestamp + wait));
        }
        uint256 next = level + amount;
        _withdrawnInPeriod = next;
        _bucketAt = uint64(block.timestamp);
        _periodStart = uint64(block.timestamp);
        // The alert when the level crosses 90 % of the cap (each time it does).
        if (level * 10 < cap * 9 && next * 10 >= cap * 9) emit WithdrawalCapNearlyReached(uint64(block.timestamp), next, cap);
    }

    // ---------------------------------------------------------- Migration

    /// @inheritdoc IMarginVault
    function migrateAccounts(address[] calldata accounts, uint256[] calldata deposited, uint256[] calldata withdrawn)
        external
        onlyMigrator
    {
        if (accounts.length != deposited.length || accounts.length != withdrawn.length) revert LengthMismatch();
        for (uint256 i; i < accounts.length; ++i) {
            if (_migrated[accounts[i]]) continue;
            _migrated[accounts[i]] = true;
            depositedOf[accounts[i]] += deposited[i];
            withdrawnOf[accounts[i]] += withdrawn[i];
            totalDeposited += deposited[i];
            totalWithdrawn += withdrawn[i];
            emit AccountMigrated(accounts[i], deposited[i], withdrawn[i]);
        }
    }

    /// @inheritdoc IMarginVault
    function migrateWithdrawalsPaid(bytes32[] calldata withdrawalIds) external onlyMigrator {
        for (uint256 i; i < withdrawalIds.length; ++i) {
            withdrawalPaid[withdrawalIds[i]] = true;
        }
    }
}
