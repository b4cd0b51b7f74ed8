// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {OwnableUpgradeable} from "@openzeppelin/contracts-upgradeable/access/OwnableUpgradeable.sol";
import {Ownable2StepUpgradeable} from "@openzeppelin/contracts-upgradeable/access/Ownable2StepUpgradeable.sol";
import {VenueUpgradeable} from "./VenueUpgradeable.sol";
import {IPriceFeedHub} from "./interfaces/IPriceFeedHub.sol";
import {IPriceFeed} from "./interfaces/IPriceFeed.sol";

/// @title PriceFeedHub
/// @notice The rounds of every venue price feed, written by the publisher; see {IPriceFeedHub}.
/// @dev One contract holds the rounds so that one transaction publishes every asset that is due
/// (a Chainlink aggregator per asset would need a transaction, or a multicall, per asset); each
/// asset keeps a {PriceFeed} of its own, so a consumer points at one AggregatorV3 address per
/// asset as it would with Chainlink.
contract PriceFeedHub is IPriceFeedHub, VenueUpgradeable, Ownable2StepUpgradeable {
    /// @dev A round in one storage slot: the answer is checked to fit 128 bits on the way in.
    /// `observedAt` is the publisher's observation time (what a feed answers as `startedAt` and
    /// `updatedAt`, so a consumer's staleness check measures the price's age), `writtenAt` the block's.
    struct Round {
        int128 answer;
        uint64 observedAt;
        uint64 writtenAt;
    }

    struct FeedState {
        bool listed;
        uint80 latestRound;
    }

    /// @inheritdoc IPriceFeedHub
    uint64 public constant MAX_CLOCK_SKEW = 60;

    mapping(address account => bool) private _publishers;
    mapping(address feed => FeedState) private _feeds;
    mapping(address feed => mapping(uint80 roundId => Round)) private _rounds;
    address[] private _feedList;

    modifier onlyPublisher() {
        if (!_publishers[msg.sender]) revert NotPublisher(msg.sender);
        _;
    }

    /// @notice Sets up the proxy: the owner of the configuration and the upgrade authority
    /// (docs/upgrades.md).
    function initialize(address initialOwner, address upgrader_) external initializer {
        __VenueUpgradeable_init(upgrader_, false);
        __Ownable_init(initialOwner);
    }

    // ----------------------------------------------------------------- Admin

    /// @inheritdoc IPriceFeedHub
    function setPublisher(address publisher, bool enabled) external onlyOwner {
        if (publisher == address(0)) revert ZeroAddress();
        _publishers[publisher] = enabled;
        emit PublisherSet(publisher, enabled);
    }

    /// @inheritdoc IPriceFeedHub
    function listFeed(address feed) external onlyOwner {
        if (feed == address(0)) revert ZeroAddress();
        if (_feeds[feed].listed) revert FeedAlreadyListed(feed);
        address hub = IPriceFeed(feed).hub();
        if (hub != address(this)) revert FeedHubMismatch(feed, hub);
        _feeds[feed].listed = true;
        _feedList.push(feed);
        emit FeedListed(feed, IPriceFeed(feed).description());
    }

    // ------------------------------------------------------------- Publisher

    /// @inheritdoc IPriceFeedHub
    function publish(Update[] calldata updates) external onlyPublisher {
        for (uint256 i; i < updates.length; ++i) {
            Update calldata u = updates[i];
            address feed = u.feed;
            FeedState storage state = _feeds[feed];
            if (!state.listed) revert FeedNotListed(feed);
            int256 answer = u.answer;
            if (answer <= 0 || answer > type(int128).max) revert InvalidAnswer(feed, answer);
            uint64 observedAt = u.observedAt;
            if (observedAt == 0) revert InvalidObservationTime(feed, observedAt, block.timestamp);
            // The time checks depend on the block and on the feed's last round, which the publisher
            // cannot foresee: a refusal skips this feed only, never the batch (one round stamped
            // ahead would otherwise block every feed's honest updates until the clock caught up).
            uint256 limit = block.timestamp + MAX_CLOCK_SKEW;
            if (observedAt > limit) {
                emit UpdateRefused(feed, RefusalReason.FutureObservation, observedAt, limit);
                continue;
            }
            uint80 latest = state.latestRound;
            if (latest != 0) {
                uint64 previous = _rounds[feed][latest].observedAt;
                if (observedAt < previous) {
                    emit UpdateRefused(feed, RefusalReason.ObservationOutOfOrder, observedAt, previous);
                    continue;
                }
            }
            uint80 roundId = latest + 1;
            state.latestRound = roundId;
            _rounds[feed][roundId] =
                Round({answer: int128(answer), observedAt: observedAt, writtenAt: uint64(block.timestamp)});
            emit PricePublished(feed, roundId, answer, observedAt, block.timestamp);
        }
    }

    // ------------------------------------------------------------------ Owner

    /// @notice Accepts the ownership offered to the direct caller.
    /// @dev `msg.sender` explicitly, never a forwarded sender (issue 43).
    function acceptOwnership() public override {
        if (pendingOwner() != msg.sender) revert OwnableUnauthorizedAccount(msg.sender);
        _transferOwnership(msg.sender);
    }

    // ----------------------------------------------------------------- Views

    /// @inheritdoc IPriceFeedHub
    function isPublisher(address account) external view returns (bool) {
        return _publishers[account];
    }

    /// @inheritdoc IPriceFeedHub
    function isListed(address feed) external view returns (bool) {
        return _feeds[feed].listed;
    }

    /// @inheritdoc IPriceFeedHub
    function feeds() external view returns (address[] memory) {
        return _feedList;
    }

    /// @inheritdoc IPriceFeedHub
    function latestRoundOf(address feed)
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        roundId = _feeds[feed].latestRound;
        if (roundId == 0) return (0, 0, 0, 0, 0);
        Round memory r = _rounds[feed][roundId];
        return (roundId, r.answer, r.observedAt, r.observedAt, roundId);
    }

    /// @inheritdoc IPriceFeedHub
    function roundOf(address feed, uint80 roundId)
        external
        view
        returns (uint80 roundIdOut, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        if (roundId == 0 || roundId > _feeds[feed].latestRound) revert RoundNotFound(feed, roundId);
        Round memory r = _rounds[feed][roundId];
        return (roundId, r.answer, r.observedAt, r.observedAt, roundId);
    }

    /// @inheritdoc IPriceFeedHub
    function latestRoundsOf(address[] calldata feedList) external view returns (RoundData[] memory rounds) {
        rounds = new RoundData[](feedList.length);
        for (uint256 i; i < feedList.length; ++i) {
            uint80 roundId = _feeds[feedList[i]].latestRound;
            if (roundId == 0) continue;
            Round memory r = _rounds[feedList[i]][roundId];
            rounds[i] = RoundData({
                roundId: roundId,
                answer: r.answer,
                startedAt: r.observedAt,
                updatedAt: r.observedAt,
                writtenAt: r.writtenAt
            });
        }
    }
}
