// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {OwnableUpgradeable} from "@openzeppelin/contracts-upgradeable/access/OwnableUpgradeable.sol";
import {Ownable2StepUpgradeable} from "@openzeppelin/contracts-upgradeable/access/Ownable2StepUpgradeable.sol";
import {VenueUpgradeable} from "./VenueUpgradeable.sol";
import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";
import {IDividendDistributor} from "./interfaces/IDividendDistributor.sol";

/// @title DividendDistributor
/// @notice Cash dividends to holders of record through Merkle distributions; see {IDividendDistributor}.
/// @dev Invariant per distribution: `paid <= total`, and the contract holds, in each token, at least
/// the sum of `total - paid` over that token's distributions (each is funded with its exact total
/// before any of it can be paid).
contract DividendDistributor is IDividendDistributor, VenueUpgradeable, Ownable2StepUpgradeable {
    using SafeERC20 for IERC20;

    // ----------------------------------------------------------------- State

    /// @inheritdoc IDividendDistributor
    mapping(address account => bool) public isOperator;

    /// @inheritdoc IDividendDistributor
    uint256 public distributionCount;

    /// @inheritdoc IDividendDistributor
    mapping(bytes32 ref => uint256) public distributionOf;

    mapping(uint256 distributionId => Distribution) private _distributions;
    mapping(uint256 distributionId => mapping(address account => bool)) private _claimed;

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

    /// @inheritdoc IDividendDistributor
    function setOperator(address operator, bool enabled) external onlyOwner {
        if (operator == address(0)) revert ZeroAddress();
        isOperator[operator] = enabled;
        emit OperatorSet(operator, enabled);
    }

    // -------------------------------------------------------------- Operator

    /// @inheritdoc IDividendDistributor
    function createDistribution(
        bytes32 ref,
        address stock,
        address token,
        bytes32 merkleRoot,
        uint256 total,
        uint64 recordBlock
    ) external onlyOperator returns (uint256 distributionId) {
        if (stock == address(0) || token == address(0)) revert ZeroAddress();
        if (total == 0) revert ZeroAmount();
        if (total > type(uint128).max) revert AmountTooLarge(total);
        uint256 existing = distributionOf[ref];
        if (existing != 0) revert DistributionExists(ref, existing);

        distributionId = ++distributionCount;
        distributionOf[ref] = distributionId;
        _distributions[distributionId] = Distribution({
            token: token,
            stock: stock,
            merkleRoot: merkleRoot,
            total: uint128(total),
            paid: 0,
            recordBlock: recordBlock,
            ref: ref
        });
        emit DistributionCreated(distributionId, ref, stock, token, merkleRoot, total, recordBlock);
        // Funded in the same transaction: a distribution never exists without its cash.
        IERC20(token).safeTransferFrom(msg.sender, address(this), total);
    }

    // ---------------------------------------------------------------- Payout

    /// @inheritdoc IDividendDistributor
    function claim(uint256 distributionId, address account, uint256 amount, bytes32[] calldata proof) external {
        Distribution storage d = _existing(distributionId);
        if (_claimed[distributionId][account]) revert AlreadyClaimed(distributionId, account);
        _verify(d, distributionId, account, amount, proof);
        _pay(d, distributionId, account, amount);
    }

    /// @inheritdoc IDividendDistributor
    function pushPayouts(
        uint256 distributionId,
        address[] calldata accounts,
        uint256[] calldata amounts,
        bytes32[][] calldata proofs
    ) external returns (uint256 paidCount) {
        if (accounts.length != amounts.length || accounts.length != proofs.length) revert LengthMismatch();
        Distribution storage d = _existing(distributionId);
        for (uint256 i = 0; i < accounts.length; ++i) {
            address account = accounts[i];
            if (_claimed[distributionId][account]) continue;
            _verify(d, distributionId, account, amounts[i], proofs[i]);
            _pay(d, distributionId, account, amounts[i]);
            ++paidCount;
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

    /// @inheritdoc IDividendDistributor
    function isClaimed(uint256 distributionId, address account) external view returns (bool) {
        return _claimed[distributionId][account];
    }

    /// @inheritdoc IDividendDistributor
    function distribution(uint256 distributionId) external view returns (Distribution memory) {
        return _distributions[distributionId];
    }

    // -------------------------------------------------------------- Internal

    function _existing(uint256 distributionId) private view returns (Distribution storage d) {
        d = _distributions[distributionId];
        if (d.token == address(0)) revert UnknownDistribution(distributionId);
    }

    function _verify(
        Distribution storage d,
        uint256 distributionId,
        address account,
        uint256 amount,
        bytes32[] calldata proof
    ) private view {
        bytes32 leaf = keccak256(bytes.concat(keccak256(abi.encode(account, amount))));
        if (!MerkleProof.verifyCalldata(proof, d.merkleRoot, leaf)) revert InvalidProof(distributionId, account, amount);
    }

    function _pay(Distribution storage d, uint256 distributionId, address account, uint256 amount) private {
        uint256 paid = uint256(d.paid) + amount;
        // Unreachable with a root whose leaves sum to the total; a wrong root cannot drain other distributions.
        if (paid > d.total) revert OverFunded(distributionId, d.total, paid);
        d.paid = uint128(paid);
        _claimed[distributionId][account] = true;
        emit Claimed(distributionId, account, amount);
        IERC20(d.token).safeTransfer(account, amount);
    }
}
