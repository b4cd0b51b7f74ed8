// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title ICommonErrors
/// @notice Errors shared by several contracts of the exchange. Declared once here so that a contract
/// (or interface) inheriting several of the exchange's interfaces sees a single declaration.
interface ICommonErrors {
    /// @notice An amount argument was zero where a positive amount is required.
    error ZeroAmount();

    /// @notice An address argument was the zero address.
    error ZeroAddress();

    /// @notice `caller` is not the router, the only contract allowed to move users' balances.
    error NotRouter(address caller);

    /// @notice `caller` is not an operator.
    error NotOperator(address caller);

    /// @notice `amount` does not fit the 128-bit field it is recorded in.
    error AmountTooLarge(uint256 amount);

    /// @notice A batch's arrays differ in length.
    error LengthMismatch();

    /// @notice The guardian has paused new orders, fills and operator actions (users' exits stay open).
    error VenuePaused();
}
