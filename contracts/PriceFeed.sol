// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IPriceFeed} from "./interfaces/IPriceFeed.sol";
import {IPriceFeedHub} from "./interfaces/IPriceFeedHub.sol";

/// @title PriceFeed
/// @notice One asset's Chainlink-shaped price feed (AggregatorV3Interface, 8 decimals); its rounds
/// live in the {PriceFeedHub} it names, where the publisher writes them. See {IPriceFeed}.
contract PriceFeed is IPriceFeed {
    /// @inheritdoc IPriceFeed
    address public immutable hub;
    string private _description;

    constructor(address hub_, string memory description_) {
        if (hub_ == address(0)) revert ZeroAddress();
        hub = hub_;
        _description = description_;
    }

    /// @notice 8, as Chainlink's USD feeds.
    function decimals() external pure returns (uint8) {
        return 8;
    }

    /// @notice 1: the first version of the venue's feed.
    function version() external pure returns (uint256) {
        return 1;
    }

    function description() external view returns (string memory) {
        return _description;
    }

    function getRoundData(uint80 _roundId)
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        return IPriceFeedHub(hub).roundOf(address(this), _roundId);
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        return IPriceFeedHub(hub).latestRoundOf(address(this));
    }
}
