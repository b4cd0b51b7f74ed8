// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IStockRouter} from "./IStockRouter.sol";

/// @title IAccountLens
/// @notice Read-only aggregation so that a balance or config read is a single `eth_call`.
interface IAccountLens {
    struct StockAccount {
        address stock;
        uint256 wallet;
        uint256 exchange;
        uint256 locked;
        /// @dev allowance of the user to `spender` (0 when `spender` is the zero address)
        uint256 allowance;
    }

    struct CashTokenAccount {
        address token;
        uint256 wallet;
        uint256 allowance;
    }

    struct Account {
        uint256 blockNumber;
        uint256 freeMusd;
        uint256 lockedMusd;
        StockAccount[] stocks;
        CashTokenAccount[] cashTokens;
    }

    struct CashTokenInfo {
        address token;
        string symbol;
        uint8 decimals;
        bool enabled;
        uint256 minAmount;
        uint256 withdrawBuffer;
        uint256 cashierTokenBalance;
    }

    struct StockInfo {
        address stock;
        string symbol;
        string name;
        uint8 decimals;
        uint256 totalSupply;
    }

    struct MarketConfig {
        uint256 blockNumber;
        uint256 creditBuffer;
        uint256 feeBalance;
        address treasury;
        uint256 treasuryBalance;
        uint256 totalQueuedDeposits;
        uint256 totalQueuedWithdrawals;
        uint16 marketFeeBps;
        uint16 limitFeeBps;
        CashTokenInfo[] cashTokens;
        StockInfo[] stocks;
    }

    function cashier() external view returns (address);
    function router() external view returns (address);

    /// @notice mUSD balances of `user`, and per stock and cash token its wallet, exchange and
    /// allowance figures. Allowances are to `spender` (0 when `spender` is the zero address).
    function getAccount(address user, address[] calldata stocks, address[] calldata cashTokens, address spender)
        external
        view
        returns (Account memory);

    /// @notice Buffers, fees, treasury and queue totals, fee rates, every supported cash token and
    /// every listed stock.
    function getMarketConfig() external view returns (MarketConfig memory);

    /// @notice The orders `orderIds` (status None for an unknown id).
    function getOrders(uint256[] calldata orderIds) external view returns (IStockRouter.Order[] memory);
}
