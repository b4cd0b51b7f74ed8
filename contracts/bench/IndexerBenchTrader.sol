// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IStockRouter} from "../interfaces/IStockRouter.sol";

/// @title IndexerBenchTrader
/// @notice Benchmark helper only (bench/indexer-bench.ts), never deployed by the product: a trader
/// contract that places and cancels many limit orders through the StockRouter in one transaction,
/// so that a benchmark can produce tens of thousands of real router events in seconds.
contract IndexerBenchTrader {
    IStockRouter public immutable router;

    constructor(IStockRouter router_) {
        router = router_;
    }

    /// @notice Pulls `amount` of `token` from the caller (who approved this contract) and deposits
    /// it into the Cashier as this contract's mUSD balance.
    function fund(IERC20 token, uint256 amount) external {
        require(token.transferFrom(msg.sender, address(this), amount), "pull failed");
        require(token.approve(address(router), amount), "approve failed");
        router.deposit(address(token), amount);
    }

    /// @notice Places `count` limit buys of `quantity` at `price`; returns the first order id.
    function placeMany(address stock, uint256 count, uint256 quantity, uint256 price, uint32 deadline)
        external
        returns (uint256 firstId)
    {
        for (uint256 i; i < count; ++i) {
            uint256 id = router.placeLimitOrder(stock, IStockRouter.Side.Buy, quantity, price, 0, deadline);
            if (i == 0) firstId = id;
        }
    }

    /// @notice Requests the cancel of orders `firstId` .. `firstId + count - 1`.
    function cancelMany(uint256 firstId, uint256 count) external {
        for (uint256 i; i < count; ++i) {
            router.cancelLimitOrder(firstId + i);
        }
    }
}
