// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ICommonErrors} from "./ICommonErrors.sol";

/// @title IStockErrors
/// @notice Errors of a Stock token that can surface through the StockRouter.
interface IStockErrors {
    /// @notice The user's exchange balance (free, or locked for `unlock`/`burnLocked`) is too low.
    error InsufficientStockBalance(uint256 available, uint256 required);
}

/// @title IStock
/// @notice One tokenized stock. An ERC-20 (18 decimals) for wallet balances, plus exchange balances
/// kept inside the contract: `stockBalance` (free) and `lockedStockBalance` (locked by open sell
/// orders). The contract's own ERC-20 balance always equals the sum of all exchange balances.
/// @dev Only the router moves exchange balances; users reach these functions through the StockRouter.
interface IStock is IStockErrors, ICommonErrors {
    /// @notice `amount` moved from `user`'s wallet into their free exchange balance.
    event StockDeposited(address indexed user, uint256 amount);

    /// @notice `amount` moved from `user`'s free exchange balance back to their wallet.
    event StockWithdrawn(address indexed user, uint256 amount);

    /// @notice The router allowed to move exchange balances changed.
    event RouterSet(address indexed router);

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

    /// @notice Moves `amount` from free to locked exchange balance (sell order placed). Router only.
    function lock(address user, uint256 amount) external;

    /// @notice Moves `amount` from locked back to free exchange balance (order closed). Router only.
    function unlock(address user, uint256 amount) external;

    /// @notice Mints `amount` into `user`'s free exchange balance (buy settlement). Router only.
    function mintToExchange(address user, uint256 amount) external;

    /// @notice Burns `amount` of `user`'s locked exchange balance (sell settlement). Router only.
    function burnLocked(address user, uint256 amount) external;
}
