// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ICommonErrors} from "./ICommonErrors.sol";
import {IPriceFeedErrors} from "./IPriceFeed.sol";

/// @title IPriceFeedHub
/// @notice The venue's on-chain oracle (docs/contracts.md, "PriceFeedHub and PriceFeed"). It keeps
/// the rounds of every listed {IPriceFeed}: a publisher pushes the prices the venue trades on (on
/// a heartbeat, or sooner when a price moved by the deviation threshold, as Chainlink's feeds do),
/// all the assets that are due in one `publish` transaction; each asset's round counter is its own.
/// Answers have the feeds' 8 decimals and must be positive. Contracts and tools read an asset
/// through its feed's `latestRoundData`, or several at once through `latestRoundsOf`.
interface IPriceFeedHub is IPriceFeedErrors, ICommonErrors {
    /// @notice One asset's new price.
    struct Update {
        /// @notice A listed feed.
        address feed;
        /// @notice The price, in the feed's decimals (8); must be positive and fit 128 bits.
        int256 answer;
        /// @notice When the publisher's source observed the price, Unix seconds: not zero (the call
        /// reverts); not before the feed's previous observation and at most `MAX_CLOCK_SKEW` after
        /// the block, or this update alone is refused (`UpdateRefused`).
        uint64 observedAt;
    }

    /// @notice One round as the feeds answer it.
    struct RoundData {
        uint80 roundId;
        int256 answer;
        /// @notice The observation time the publisher gave, Unix seconds.
        uint256 startedAt;
        /// @notice The observation time as well (what staleness is measured from), Unix seconds.
        uint256 updatedAt;
        /// @notice The block time the round was written, Unix seconds.
        uint256 writtenAt;
    }

    /// @notice Why one update of a batch was refused.
    enum RefusalReason {
        /// @notice Observed more than `MAX_CLOCK_SKEW` after the block (`limit` = block time + skew).
        FutureObservation,
        /// @notice Observed before the feed's latest round (`limit` = that round's observation time).
        ObservationOutOfOrder
    }

    /// @notice `caller` is not a publisher.
    error NotPublisher(address caller);
    error FeedNotListed(address feed);
    error FeedAlreadyListed(address feed);
    /// @notice The feed answers another hub than this one.
    error FeedHubMismatch(address feed, address hub);
    /// @notice A zero or negative answer, or one that does not fit 128 bits.
    error InvalidAnswer(address feed, int256 answer);
    /// @notice An observation time of zero.
    error InvalidObservationTime(address feed, uint64 observedAt, uint256 blockTimestamp);
    event PublisherSet(address indexed publisher, bool enabled);
    event FeedListed(address indexed feed, string description);
    /// @notice A new round of `feed`: `answer` observed at `observedAt`, written at `updatedAt` (the block's time).
    event PricePublished(address indexed feed, uint80 indexed roundId, int256 answer, uint64 observedAt, uint256 updatedAt);
    /// @notice One update of a `publish` batch was refused and skipped (the others were written):
    /// observed at `observedAt`, past `limit` (see {RefusalReason}). An operator alerts on it.
    event UpdateRefused(address indexed feed, RefusalReason reason, uint64 observedAt, uint256 limit);

    // ------------------------------------------------------------------ Admin

    /// @notice Grants or revokes the right to publish. Owner only.
    function setPublisher(address publisher, bool enabled) external;

    /// @notice Lists a feed whose `hub()` is this contract (`FeedHubMismatch` otherwise). Owner only.
    function listFeed(address feed) external;

    // -------------------------------------------------------------- Publisher

    /// @notice Writes one new round per update, in order (a feed may appear more than once). An
    /// unlisted feed, an invalid answer or a zero observation time reverts the whole call (the
    /// publisher's own mistake, the same in any block); an observation too far ahead of the block or
    /// older than the feed's latest skips that update alone (`UpdateRefused`). Publisher only.
    function publish(Update[] calldata updates) external;

    // ------------------------------------------------------------------ Views

    /// @notice How far ahead of the block an observation time may be (clock skew between the
    /// publisher's source and the chain), seconds: 60.
    function MAX_CLOCK_SKEW() external view returns (uint64);

    function isPublisher(address account) external view returns (bool);
    function isListed(address feed) external view returns (bool);
    /// @notice Every listed feed, in listing order.
    function feeds() external view returns (address[] memory);

    /// @notice The feed's latest round, AggregatorV3-shaped (all zero before its first round):
    /// `startedAt` and `updatedAt` are both the observation time, so a consumer's age check measures
    /// how old the price is, not when it was written.
    function latestRoundOf(address feed)
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound);

    /// @notice One round of the feed; `RoundNotFound` when it has none of that id.
    function roundOf(address feed, uint80 roundId)
        external
        view
        returns (uint80 roundIdOut, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound);

    /// @notice The latest round of each feed (zeros for one without rounds), for one-call reads.
    function latestRoundsOf(address[] calldata feedList) external view returns (RoundData[] memory);
}
