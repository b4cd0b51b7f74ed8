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
        _withdrawalCap = cap;
        if (period != _withdrawalPeriod) {
            // A new period length starts a new window: the running total of the old one no longer applies.
            _withdrawalPeriod = period;
            _periodStart = uint64(block.timestamp / period) * period;
            _withdrawnInPeriod = 0;
            _capAlerted = false;
        }
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
        if (recipient != account) emit WithdrawalRecipient(withdrawalId, recipient);
    }

    // ------------------------------------------------------------ Escape hatch

    /// @inheritdoc IMarginVault
    function freeze() external notFrozen {
        uint256 openAt = freezableAt();
        if (openAt == 0) revert NoReservesRoot();
        if (block.timestamp < openAt) revert OperatorNotSilent(openAt);
        IReserveRegistry.ReserveRecord memory r = _registry.latest();
        _frozenAt = uint64(block.timestamp);
        _escapeEpoch = r.epoch;
        _escapeRoot = r.root;
        _escapeTotal = r.total;
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
        uint256 value = equity + pendingWithdrawals;
        if (equity >= MAX_SUM || pendingWithdrawals >= MAX_SUM || value >= MAX_SUM) revert InvalidEscapeProof();
        bytes32 hash = keccak256(abi.encode(salt, account, equity, pendingWithdrawals, deposited, withdrawn));
        uint256 sum = value;
        for (uint256 i; i < path.length; ++i) {
            ProofStep calldata step = path[i];
            if (step.sum >= MAX_SUM) revert InvalidEscapeProof();
            hash = step.left
                ? keccak256(abi.encode(step.hash, step.sum, hash, sum))
                : keccak256(abi.encode(hash, sum, step.hash, step.sum));
            sum += step.sum;
            if (sum >= MAX_SUM) revert InvalidEscapeProof();
        }
        if (hash != _escapeRoot || sum != _escapeTotal) revert InvalidEscapeProof();
        // What the vault took from the account since the snapshot comes back, what it paid since
        // is taken off: the per-account totals are the vault's own, the leaf commits the engine's.
        uint256 credit = value + depositedOf[account] + withdrawn;
        uint256 debit = deposited + withdrawnOf[account];
        if (credit <= debit) revert NothingToEscape(account);
        uint256 amount = credit - debit;
        IERC20 token = IERC20(collateralToken);
        uint256 available = token.balanceOf(address(this));
        if (available < amount) revert InsufficientVaultBalance(available, amount);
        withdrawnOf[account] += amount;
        totalWithdrawn += amount;
        token.safeTransfer(account, amount);
        emit EscapeWithdrawn(account, amount, _escapeEpoch);
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
        periodStart = uint64(block.timestamp / period) * period;
        withdrawnInPeriod = periodStart == _periodStart ? _withdrawnInPeriod : 0;
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

    /// @dev Fixed windows of `period` seconds: a payment past the window's cap waits for the next
    /// window (the relayer retries), so a leaked signing path drains at most the cap per period.
    function _countAgainstCap(uint256 amount) private {
        uint64 period = _withdrawalPeriod;
        uint256 cap = _withdrawalCap;
        if (amount > cap) revert WithdrawalAboveCap(amount, cap);
        uint64 start = period == 0 ? 0 : uint64(block.timestamp / period) * period;
        uint256 withdrawn = _withdrawnInPeriod;
        if (start != _periodStart) {
            _periodStart = start;
            withdrawn = 0;
            _capAlerted = false;
        }
        uint256 available = cap > withdrawn ? cap - withdrawn : 0;
        if (amount > available) revert WithdrawalCapExceeded(available, amount, start + period);
        withdrawn += amount;
        _withdrawnInPeriod = withdrawn;
        if (!_capAlerted && withdrawn * 10 >= cap * 9) {
            _capAlerted = true;
            emit WithdrawalCapNearlyReached(start, withdrawn, cap);
        }
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
