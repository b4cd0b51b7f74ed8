// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ICommonErrors} from "./ICommonErrors.sol";

/// @title AggregatorV3Interface
/// @notice Chainlink's price-feed interface, function for function as `@chainlink/contracts` 1.5
/// ships it (`src/v0.8/shared/interfaces/AggregatorV3Interface.sol`, MIT). Written out here instead
/// of imported: the 1.5 package brings fourteen runtime dependencies (four OpenZeppelin copies,
/// L2 SDKs, a git dependency) for these five functions. Whatever reads a Chainlink feed reads the
/// venue's feeds through it, and the StockRouter reads a real Chainlink feed just as well.
interface AggregatorV3Interface {
    /// @notice Decimals of `answer` (8 for Chainlink's USD feeds and the venue's).
    function decimals() external view returns (uint8);

    /// @notice What the feed prices, e.g. `AAPL / USD`.
    function description() external view returns (string memory);

    function version() external view returns (uint256);

    /// @notice One round: `answer` in `decimals()`, `startedAt` and `updatedAt` when the price was
    /// observed (Unix seconds; a venue feed answers its publisher's observation time for both, so an
    /// age check measures the price's age, not when it reached the chain); `answeredInRound` equals `roundId`.
    function getRoundData(uint80 _roundId)
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound);

    /// @notice The latest round (all zero before the first).
    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound);
}

/// @title IPriceFeedErrors
/// @notice Errors a feed's reads share with its hub (the feed passes the hub's reverts on).
interface IPriceFeedErrors {
    /// @notice The feed has no such round.
    error RoundNotFound(address feed, uint80 roundId);
}

/// @title IPriceFeed
/// @notice One asset's price feed on the venue's oracle (docs/contracts.md, "PriceFeedHub and
/// PriceFeed"): a Chainlink-shaped view whose rounds live in its {IPriceFeedHub}, where the
/// publisher writes every asset's round in one transaction. The feed holds no state but its hub
/// and description, so it never disagrees with the hub.
interface IPriceFeed is AggregatorV3Interface, IPriceFeedErrors, ICommonErrors {
    /// @notice The hub holding this feed's rounds.
    function hub() external view returns (address);
}
