// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ICommonErrors} from "./ICommonErrors.sol";

/// @title IStockErrors
/// @notice Errors of a Stock token that can surface through the StockRouter.
interface IStockErrors {
    /// @notice The user's exchange balance (free, or locked for `unlock`/`burnLocked`) is too low.
    /// Both figures are in the unit of the call that failed (shares, or base units for the base-unit calls).
    error InsufficientStockBalance(uint256 available, uint256 required);

    /// @notice A split ratio with a zero side, or one that leaves the share count unchanged.
    error InvalidSplitRatio(uint256 numerator, uint256 denominator);

    /// @notice The split `ref` was already applied: a retried split must not apply twice.
    error SplitAlreadyApplied(bytes32 ref);

    /// @notice The split would take the multiplier to zero or beyond what balances can be scaled by.
    error MultiplierOutOfRange(uint256 multiplier);
}

/// @title IStock
/// @notice One tokenized stock. An ERC-20 (18 decimals) for wallet balances, plus exchange balances
/// kept inside the contract: `stockBalance` (free) and `lockedStockBalance` (locked by open sell
/// orders). The contract's own ERC-20 balance always equals the sum of all exchange balances.
///
/// Splits use a share multiplier, as xStocks' and Ondo's tokens do: every balance is stored in
/// **base units**, which a split never touches, and shown in **shares** (1e-18 share each):
/// `shares = floor(base × multiplier / 1e36)`. A split `numerator:denominator` (10:1 for a ten-for-one
/// split) multiplies `multiplier` by the ratio in one transaction, whatever the number of holders.
/// An amount given in shares converts to base units rounded against the caller: what a sender gives
/// is rounded up, what a mint credits is rounded down, so no call creates value (docs/corporate-actions.md).
/// @dev Only the router moves exchange balances; users reach these functions through the StockRouter.
interface IStock is IStockErrors, ICommonErrors {
    /// @notice `amount` moved from `user`'s wallet into their free exchange balance.
    event StockDeposited(address indexed user, uint256 amount);

    /// @notice `amount` moved from `user`'s free exchange balance back to their wallet.
    event StockWithdrawn(address indexed user, uint256 amount);

    /// @notice The router allowed to move exchange balances changed.
    event RouterSet(address indexed router);

    /// @notice A split `numerator:denominator` took the multiplier from `oldMultiplier` to
    /// `newMultiplier` (both scaled by 1e36). `ref` names the corporate action it applies.
    event MultiplierChanged(
        bytes32 indexed ref, uint256 oldMultiplier, uint256 newMultiplier, uint256 numerator, uint256 denominator
    );

    /// @notice Shares per base unit, scaled by 1e36 (1e36 until the first split).
    function multiplier() external view returns (uint256);

    /// @notice Whether the split `ref` has been applied.
    function splitApplied(bytes32 ref) external view returns (bool);

    /// @notice `shares` in base units, rounded up or down.
    function sharesToBase(uint256 shares, bool roundUp) external view returns (uint256);

    /// @notice `base` base units in shares, rounded down.
    function baseToShares(uint256 base) external view returns (uint256);

    /// @notice Applies a split: every balance, exchange balances and the total supply are multiplied
    /// by `numerator / denominator` at once. Owner only; a `ref` applies once.
    function split(uint256 numerator, uint256 denominator, bytes32 ref) external;

    /// @notice The router allowed to move exchange balances.
    function router() external view returns (address);

    /// @notice Free exchange balance of `user` (shown by the API as exchangeBalance).
    function stockBalance(address user) external view returns (uint256);

    /// @notice Exchange balance of `user` locked by open sell orders.
    function lockedStockBalance(address user) external view returns (uint256);

    /// @notice Sets the router. Owner only.
    function setRouter(address router) external;

    /// @notice Mints wallet tokens to `to` (demo funding). Owner only.
    function mint(address to, uint256 amount) external;

    /// @notice Moves `amount` of `user`'s wallet tokens into their free exchange balance, spending
    /// the allowance `user` gave the router (the caller). Router only.
    function depositToExchange(address user, uint256 amount) external;

    /// @notice Moves `amount` of `user`'s free exchange balance back to their wallet. Router only.
    function withdrawFromExchange(address user, uint256 amount) external;

    /// @notice Moves `amount` shares (rounded up to base units) from free to locked exchange balance
    /// (sell order placed) and returns the base units locked. Router only.
    function lock(address user, uint256 amount) external returns (uint256 baseLocked);

    /// @notice Moves `baseAmount` base units from locked back to free exchange balance (order
    /// closed). Router only.
    function unlock(address user, uint256 baseAmount) external;

    /// @notice Mints `amount` shares (rounded down to base units) into `user`'s free exchange balance
    /// (buy settlement). Router only.
    function mintToExchange(address user, uint256 amount) external;

    /// @notice Burns `baseAmount` base units of `user`'s locked exchange balance (sell settlement).
    /// Router only.
    function burnLocked(address user, uint256 baseAmount) external;

    // ---------------------------------------------------------- Migration
    // Only the upgrader, only while the migration window is open (IVenueUpgradeable.migrating).

    /// @notice `user`'s exchange balance of the earlier deployment was credited (shares).
    event ExchangeBalanceMigrated(address indexed user, uint256 amount);

    /// @notice Takes the earlier token's split multiplier and the refs of the splits it applied, so a
    /// split is never applied twice. Migration only, before any balance is imported.
    function migrateMultiplier(uint256 multiplier_, bytes32[] calldata appliedRefs) external;

    /// @notice Mints each holder's wallet balance and credits its free exchange balance, both in base
    /// units (exact whatever the multiplier), once per holder (a repeated holder is skipped). Migration only.
    function migrateHolders(address[] calldata users, uint256[] calldata walletBase, uint256[] calldata exchangeBase)
        external;
}
