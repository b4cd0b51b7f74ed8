// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20Upgradeable} from "@openzeppelin/contracts-upgradeable/token/ERC20/ERC20Upgradeable.sol";
import {OwnableUpgradeable} from "@openzeppelin/contracts-upgradeable/access/OwnableUpgradeable.sol";
import {Ownable2StepUpgradeable} from "@openzeppelin/contracts-upgradeable/access/Ownable2StepUpgradeable.sol";
import {VenueUpgradeable} from "./VenueUpgradeable.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {IStock} from "./interfaces/IStock.sol";

/// @title Stock
/// @notice One tokenized stock: ERC-20 wallet balances plus exchange balances held by this contract,
/// all stored in base units and shown in shares through the split multiplier (see {IStock}).
/// @dev Exchange balances are backed 1:1 (in base units) by this contract's own ERC-20 balance. Plain
/// transfers to the contract are refused so that the backing stays exact. OpenZeppelin's balance
/// storage is bypassed: `_update` is overridden to move base units, so every ERC-20 path (transfer,
/// transferFrom, mint, burn) goes through the conversion in one place.

contract Stock is IStock, VenueUpgradeable, ERC20Upgradeable, Ownable2StepUpgradeable {
    uint256 private constant ONE = 1e36;
    /// @dev Bounds keep `base × multiplier` and its inverse meaningful: a cumulative ratio of 1e12
    /// either way is far beyond any real split history. The 36 decimals make a ratio that does not
    /// divide (1:3, 2:3) cost at most one unit of a balance, where 18 would cost a unit per 1e18.
    uint256 private constant MIN_MULTIPLIER = 1e24;
    uint256 private constant MAX_MULTIPLIER = 1e48;

    // ----------------------------------------------------------------- State

    /// @inheritdoc IStock
    address public router;

    /// @inheritdoc IStock
    uint256 public multiplier;

    /// @inheritdoc IStock
    mapping(bytes32 ref => bool) public splitApplied;

    mapping(address account => uint256) private _baseBalances;
    uint256 private _baseSupply;
    mapping(address user => uint256) private _freeBase;
    mapping(address user => uint256) private _lockedBase;
    /// @dev Holders already migrated: a rerun after a crash mints nobody's balance twice.
    mapping(address user => bool) private _migrated;

    modifier onlyRouter() {
        if (msg.sender != router) revert NotRouter(msg.sender);
        _;
    }

    /// @notice Sets up the proxy of one stock: its ERC-20 name and symbol, the owner of its
    /// configuration and the upgrade authority (docs/upgrades.md). Every Stock proxy of a venue shares
    /// one implementation.
    function initialize(
        string calldata name_,
        string calldata symbol_,
        address initialOwner,
        address upgrader_,
        bool migrating_
    )
        external
        initializer
    {
        __VenueUpgradeable_init(upgrader_, migrating_);
        __ERC20_init(name_, symbol_);
        __Ownable_init(initialOwner);
        multiplier = ONE;
    }

    // ----------------------------------------------------------------- Admin

    /// @inheritdoc IStock
    function setRouter(address router_) external onlyOwner {
        if (router_ == address(0)) revert ZeroAddress();
        router = router_;
        emit RouterSet(router_);
    }

    /// @inheritdoc IStock
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }

    /// @inheritdoc IStock
    function split(uint256 numerator, uint256 denominator, bytes32 ref) external onlyOwner {
        if (numerator == 0 || denominator == 0 || numerator == denominator) {
            revert InvalidSplitRatio(numerator, denominator);
        }
        if (splitApplied[ref]) revert SplitAlreadyApplied(ref);
        uint256 old = multiplier;
        // Rounded down: shown balances can only shrink by the rounding, never grow.
        uint256 next = Math.mulDiv(old, numerator, denominator);
        if (next < MIN_MULTIPLIER || next > MAX_MULTIPLIER) revert MultiplierOutOfRange(next);
        splitApplied[ref] = true;
        multiplier = next;
        emit MultiplierChanged(ref, old, next, numerator, denominator);
    }

    // ----------------------------------------------------------------- Views

    /// @notice Shares of `account`'s wallet.
    function balanceOf(address account) public view override returns (uint256) {
        return _shares(_baseBalances[account]);
    }

    /// @notice Shares in existence, wallets and exchange balances together.
    function totalSupply() public view override returns (uint256) {
        return _shares(_baseSupply);
    }

    /// @notice Free exchange balance of `user`, in shares (shown by the API as exchangeBalance).
    function stockBalance(address user) external view returns (uint256) {
        return _shares(_freeBase[user]);
    }

    /// @notice Exchange balance of `user` locked by open sell orders, in shares.
    function lockedStockBalance(address user) external view returns (uint256) {
        return _shares(_lockedBase[user]);
    }

    /// @inheritdoc IStock
    function sharesToBase(uint256 shares, bool roundUp) external view returns (uint256) {
        return _base(shares, roundUp);
    }

    /// @inheritdoc IStock
    function baseToShares(uint256 base) external view returns (uint256) {
        return _shares(base);
    }

    // -------------------------------------------------------------- Exchange

    /// @inheritdoc IStock
    function depositToExchange(address user, uint256 amount) external onlyRouter {
        if (amount == 0) revert ZeroAmount();
        // The user approves the router, not this contract: one spender for cash and stock deposits.
        _spendAllowance(user, msg.sender, amount);
        uint256 base = _base(amount, true);
        _moveBase(user, address(this), base, amount);
        _freeBase[user] += base;
        emit StockDeposited(user, amount);
    }

    /// @inheritdoc IStock
    function withdrawFromExchange(address user, uint256 amount) external onlyRouter {
        if (amount == 0) revert ZeroAmount();
        uint256 base = _base(amount, true);
        _debitFree(user, base);
        _moveBase(address(this), user, base, amount);
        emit StockWithdrawn(user, amount);
    }

    /// @inheritdoc IStock
    function lock(address user, uint256 amount) external onlyRouter returns (uint256 baseLocked) {
        baseLocked = _base(amount, true);
        _debitFree(user, baseLocked);
        _lockedBase[user] += baseLocked;
    }

    /// @inheritdoc IStock
    function unlock(address user, uint256 baseAmount) external onlyRouter {
        _debitLocked(user, baseAmount);
        _freeBase[user] += baseAmount;
    }

    /// @inheritdoc IStock
    function mintToExchange(address user, uint256 amount) external onlyRouter {
        uint256 base = _base(amount, false);
        _moveBase(address(0), address(this), base, amount);
        _freeBase[user] += base;
    }

    /// @inheritdoc IStock
    function burnLocked(address user, uint256 baseAmount) external onlyRouter {
        _debitLocked(user, baseAmount);
        _moveBase(address(this), address(0), baseAmount, _shares(baseAmount));
    }

    // ---------------------------------------------------------------- ERC-20

    function transfer(address to, uint256 value) public override returns (bool) {
        if (to == address(this)) revert ERC20InvalidReceiver(to);
        return super.transfer(to, value);
    }

    function transferFrom(address from, address to, uint256 value) public override returns (bool) {
        if (to == address(this)) revert ERC20InvalidReceiver(to);
        return super.transferFrom(from, to, value);
    }

    /// @dev Every ERC-20 movement in shares: a sender (or a burn) gives the shares rounded up to
    /// base units, a mint credits them rounded down.
    function _update(address from, address to, uint256 value) internal override {
        _moveBase(from, to, _base(value, from != address(0)), value);
    }

    // -------------------------------------------------------------- Internal

    function _shares(uint256 base) private view returns (uint256) {
        return Math.mulDiv(base, multiplier, ONE);
    }

    function _base(uint256 shares, bool roundUp) private view returns (uint256) {
        return Math.mulDiv(shares, ONE, multiplier, roundUp ? Math.Rounding.Ceil : Math.Rounding.Floor);
    }

    /// @dev The Transfer event carries `shown`, the shares the caller asked to move.
    function _moveBase(address from, address to, uint256 base, uint256 shown) private {
        if (from == address(0)) {
            _baseSupply += base;
        } else {
            uint256 fromBase = _baseBalances[from];
            if (fromBase < base) revert ERC20InsufficientBalance(from, _shares(fromBase), shown);
            unchecked {
                _baseBalances[from] = fromBase - base;
            }
        }
        if (to == address(0)) {
            unchecked {
                _baseSupply -= base;
            }
        } else {
            _baseBalances[to] += base;
        }
        emit Transfer(from, to, shown);
    }

    function _debitFree(address user, uint256 base) private {
        uint256 available = _freeBase[user];
        if (available < base) revert InsufficientStockBalance(_shares(available), _shares(base));
        unchecked {
            _freeBase[user] = available - base;
        }
    }

    function _debitLocked(address user, uint256 base) private {
        uint256 available = _lockedBase[user];
        if (available < base) revert InsufficientStockBalance(available, base);
        unchecked {
            _lockedBase[user] = available - base;
        }
    }

    // ---------------------------------------------------------- Migration

    /// @inheritdoc IStock
    function migrateMultiplier(uint256 multiplier_, bytes32[] calldata appliedRefs) external onlyMigrator {
        if (_baseSupply != 0) revert MultiplierOutOfRange(multiplier_);
        if (multiplier_ < MIN_MULTIPLIER || multiplier_ > MAX_MULTIPLIER) revert MultiplierOutOfRange(multiplier_);
        uint256 old = multiplier;
        multiplier = multiplier_;
        for (uint256 i; i < appliedRefs.length; ++i) {
            splitApplied[appliedRefs[i]] = true;
        }
        if (old != multiplier_) emit MultiplierChanged(bytes32(0), old, multiplier_, multiplier_, old);
    }

    /// @inheritdoc IStock
    function migrateHolders(address[] calldata users, uint256[] calldata walletBase, uint256[] calldata exchangeBase)
        external
        onlyMigrator
    {
        if (users.length != walletBase.length || users.length != exchangeBase.length) revert LengthMismatch();
        for (uint256 i; i < users.length; ++i) {
            address user = users[i];
            if (user == address(0)) revert ZeroAddress();
            if (_migrated[user]) continue;
            _migrated[user] = true;
            if (walletBase[i] != 0) _moveBase(address(0), user, walletBase[i], _shares(walletBase[i]));
            if (exchangeBase[i] != 0) {
                uint256 shares = _shares(exchangeBase[i]);
                _moveBase(address(0), address(this), exchangeBase[i], shares);
                _freeBase[user] += exchangeBase[i];
                emit ExchangeBalanceMigrated(user, shares);
            }
        }
    }
}
