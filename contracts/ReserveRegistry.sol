// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {OwnableUpgradeable} from "@openzeppelin/contracts-upgradeable/access/OwnableUpgradeable.sol";
import {Ownable2StepUpgradeable} from "@openzeppelin/contracts-upgradeable/access/Ownable2StepUpgradeable.sol";
import {VenueUpgradeable} from "./VenueUpgradeable.sol";
import {IReserveRegistry} from "./interfaces/IReserveRegistry.sol";
import {ReservesTree} from "./libraries/ReservesTree.sol";

/// @title ReserveRegistry
/// @notice The perpetual venue's published liabilities roots; see {IReserveRegistry}.
contract ReserveRegistry is IReserveRegistry, VenueUpgradeable, Ownable2StepUpgradeable {
    /// @inheritdoc IReserveRegistry
    uint64 public constant MAX_EPOCH_LEAD_MS = 1 hours * 1000;

    // ----------------------------------------------------------------- State

    /// @inheritdoc IReserveRegistry
    mapping(address account => bool) public isOperator;
    mapping(uint64 epoch => ReserveRecord) private _records;
    ReserveRecord private _latest;
    /// @inheritdoc IReserveRegistry
    uint256 public epochCount;
    // Appended in 0.2.0 (issue 43).
    /// @inheritdoc IReserveRegistry
    uint64 public lastPostedAt;
    // Appended in 0.3.0 (issue 60).
    /// @inheritdoc IReserveRegistry
    mapping(uint64 epoch => bool) public leavesPublished;

    modifier onlyOperator() {
        if (!isOperator[msg.sender]) revert NotOperator(msg.sender);
        _;
    }

    /// @notice Sets up the proxy: the owner of the configuration and the upgrade authority
    /// (docs/upgrades.md).
    function initialize(address initialOwner, address upgrader_) external initializer {
        __VenueUpgradeable_init(upgrader_, false);
        __Ownable_init(initialOwner);
    }

    // ----------------------------------------------------------------- Admin

    /// @inheritdoc IReserveRegistry
    function setOperator(address operator, bool enabled) external onlyOwner {
        if (operator == address(0)) revert ZeroAddress();
        isOperator[operator] = enabled;
        emit OperatorSet(operator, enabled);
    }

    // -------------------------------------------------------------- Operator

    /// @inheritdoc IReserveRegistry
    function postReserves(uint64, bytes32, uint256, uint64, uint64) external view onlyOperator {
        revert LeavesRequired();
    }

    /// @inheritdoc IReserveRegistry
    function postReservesWithLeaves(uint64 epoch, uint64 timestamp, Leaf[] calldata leaves) external onlyOperator {
        uint160 previous;
        for (uint256 i; i < leaves.length; ++i) {
            uint160 account = uint160(leaves[i].account);
            if (account <= previous) revert LeavesNotSorted(i);
            previous = account;
        }
        (bytes32 root, uint256 total) = ReservesTree.build(leaves);
        _record(epoch, root, total, uint64(leaves.length), timestamp);
        leavesPublished[epoch] = true;
        emit ReserveLeaves(epoch, leaves);
    }

    function _record(uint64 epoch, bytes32 root, uint256 total, uint64 leafCount, uint64 timestamp) private {
        // Epoch 0 is the "nothing posted" value of `latest()`: strictly after it, like every other.
        if (epoch <= _latest.epoch) revert EpochNotIncreasing(epoch, _latest.epoch);
        // An epoch is a time (ms): one far ahead of the chain's clock would refuse every real epoch
        // after it, so it is bounded by the block's time plus a margin for the clocks' skew.
        uint256 maxEpoch = block.timestamp * 1000 + MAX_EPOCH_LEAD_MS;
        if (epoch > maxEpoch) revert EpochTooFarAhead(epoch, maxEpoch);
        if (total > type(uint128).max) revert AmountTooLarge(total);
        ReserveRecord memory r = ReserveRecord({
            epoch: epoch,
            root: root,
            total: uint128(total),
            leafCount: leafCount,
            timestamp: timestamp
        });
        _records[epoch] = r;
        _latest = r;
        epochCount += 1;
        lastPostedAt = uint64(block.timestamp);
        emit ReservesPosted(epoch, root, total, leafCount, timestamp);
    }

    // ------------------------------------------------------------------ Owner

    /// @notice Accepts the ownership offered to the direct caller.
    /// @dev `msg.sender` explicitly, never a forwarded sender (issue 43).
    function acceptOwnership() public override {
        if (pendingOwner() != msg.sender) revert OwnableUnauthorizedAccount(msg.sender);
        _transferOwnership(msg.sender);
    }

    // ----------------------------------------------------------------- Views

    /// @inheritdoc IReserveRegistry
    function latest() external view returns (ReserveRecord memory) {
        return _latest;
    }

    /// @inheritdoc IReserveRegistry
    function rootOf(uint64 epoch) external view returns (ReserveRecord memory) {
        ReserveRecord memory r = _records[epoch];
        if (r.epoch == 0) revert UnknownEpoch(epoch);
        return r;
    }
}
