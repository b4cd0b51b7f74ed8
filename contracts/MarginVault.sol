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

    modifier onlyOperator() {
        if (!isOperator[msg.sender]) revert NotOperator(msg.sender);
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

    // ------------------------------------------------------------------ User

    /// @inheritdoc IMarginVault
    function deposit(uint256 amount) external onlyViaProxy nonReentrant {
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
        withdrawnOf[account] += amount;
        totalWithdrawn += amount;
        token.safeTransfer(recipient, amount);
        emit Withdrawn(account, amount, withdrawalId);
        if (recipient != account) emit WithdrawalRecipient(withdrawalId, recipient);
    }

    // ----------------------------------------------------------------- Views

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
