// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Metadata} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Metadata.sol";
import {IAccountLens} from "./interfaces/IAccountLens.sol";
import {ICashier} from "./interfaces/ICashier.sol";
import {IStock} from "./interfaces/IStock.sol";
import {IStockRouter} from "./interfaces/IStockRouter.sol";

/// @title AccountLens
/// @notice Stateless read helper; see {IAccountLens}.
contract AccountLens is IAccountLens {
    // ----------------------------------------------------------------- State

    ICashier private immutable _cashier;
    IStockRouter private immutable _router;

    constructor(address cashier_, address router_) {
        _cashier = ICashier(cashier_);
        _router = IStockRouter(router_);
    }

    // ----------------------------------------------------------------- Views

    /// @inheritdoc IAccountLens
    function cashier() external view returns (address) {
        return address(_cashier);
    }

    /// @inheritdoc IAccountLens
    function router() external view returns (address) {
        return address(_router);
    }

    /// @inheritdoc IAccountLens
    function getAccount(address user, address[] calldata stocks, address[] calldata cashTokens, address spender)
        external
        view
        returns (Account memory account)
    {
        account.blockNumber = block.number;
        account.freeMusd = _cashier.balanceOf(user);
        account.lockedMusd = _cashier.lockedOf(user);
        account.stocks = new StockAccount[](stocks.length);
        for (uint256 i; i < stocks.length; ++i) {
            IStock stock = IStock(stocks[i]);
            account.stocks[i] = StockAccount({
                stock: stocks[i],
                wallet: IERC20(stocks[i]).balanceOf(user),
                exchange: stock.stockBalance(user),
                locked: stock.lockedStockBalance(user),
                allowance: spender == address(0) ? 0 : IERC20(stocks[i]).allowance(user, spender)
            });
        }
        account.cashTokens = new CashTokenAccount[](cashTokens.length);
        for (uint256 i; i < cashTokens.length; ++i) {
            IERC20 token = IERC20(cashTokens[i]);
            account.cashTokens[i] = CashTokenAccount({
                token: cashTokens[i],
                wallet: token.balanceOf(user),
                allowance: spender == address(0) ? 0 : token.allowance(user, spender)
            });
        }
    }

    /// @inheritdoc IAccountLens
    function getMarketConfig() external view returns (MarketConfig memory config) {
        config.blockNumber = block.number;
        config.creditBuffer = _cashier.creditBuffer();
        config.feeBalance = _cashier.feeBalance();
        config.treasury = _cashier.treasury();
        config.treasuryBalance = _cashier.balanceOf(config.treasury);
        config.totalQueuedDeposits = _cashier.totalQueuedDeposits();
        config.totalQueuedWithdrawals = _cashier.totalQueuedWithdrawals();
        IStockRouter.FeeConfig memory fees = _router.feeConfig();
        config.marketFeeBps = fees.marketFeeBps;
        config.limitFeeBps = fees.limitFeeBps;

        address[] memory tokens = _cashier.supportedTokens();
        config.cashTokens = new CashTokenInfo[](tokens.length);
        for (uint256 i; i < tokens.length; ++i) {
            ICashier.TokenConfig memory tc = _cashier.tokenConfig(tokens[i]);
            config.cashTokens[i] = CashTokenInfo({
                token: tokens[i],
                symbol: IERC20Metadata(tokens[i]).symbol(),
                decimals: tc.decimals,
                enabled: tc.enabled,
                minAmount: tc.minAmount,
                withdrawBuffer: tc.withdrawBuffer,
                cashierTokenBalance: IERC20(tokens[i]).balanceOf(address(_cashier))
            });
        }

        address[] memory stocks = _router.listedStocks();
        config.stocks = new StockInfo[](stocks.length);
        for (uint256 i; i < stocks.length; ++i) {
            IERC20Metadata stock = IERC20Metadata(stocks[i]);
            config.stocks[i] = StockInfo({
                stock: stocks[i],
                symbol: stock.symbol(),
                name: stock.name(),
                decimals: stock.decimals(),
                totalSupply: stock.totalSupply()
            });
        }
    }

    /// @inheritdoc IAccountLens
    function getOrders(uint256[] calldata orderIds) external view returns (IStockRouter.Order[] memory orders) {
        orders = new IStockRouter.Order[](orderIds.length);
        for (uint256 i; i < orderIds.length; ++i) {
            orders[i] = _router.getOrder(orderIds[i]);
        }
    }
}
