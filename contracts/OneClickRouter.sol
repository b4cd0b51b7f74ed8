// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {OwnableUpgradeable} from "@openzeppelin/contracts-upgradeable/access/OwnableUpgradeable.sol";
import {Ownable2StepUpgradeable} from "@openzeppelin/contracts-upgradeable/access/Ownable2StepUpgradeable.sol";
import {EIP712Upgradeable} from "@openzeppelin/contracts-upgradeable/utils/cryptography/EIP712Upgradeable.sol";
import {VenueUpgradeable} from "./VenueUpgradeable.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {IOneClickRouter} from "./interfaces/IOneClickRouter.sol";

/// @title OneClickRouter
/// @notice EIP-712 delegation and ERC-2771 forwarding to the StockRouter; see {IOneClickRouter}.
contract OneClickRouter is IOneClickRouter, VenueUpgradeable, EIP712Upgradeable, Ownable2StepUpgradeable {
    // ----------------------------------------------------------------- Types

    /// @inheritdoc IOneClickRouter
    bytes32 public constant DELEGATE_TYPEHASH =
        keccak256("Delegate(address user,address delegatee,uint64 nonce,uint32 deadline)");

    /// @inheritdoc IOneClickRouter
    uint32 public constant DELEGATION_LIFETIME = 30 days;

    // ----------------------------------------------------------------- State

    /// @inheritdoc IOneClickRouter
    address public stockRouter;
    /// @inheritdoc IOneClickRouter
    mapping(address user => address) public delegateOf;
    /// @inheritdoc IOneClickRouter
    mapping(address user => uint64) public nonces;
    /// @inheritdoc IOneClickRouter
    mapping(address user => mapping(address delegatee => uint64)) public nonceOffset;
    /// @inheritdoc IOneClickRouter
    mapping(address user => uint64) public delegationExpiresAt;

    /// @notice Sets up the proxy: the EIP-712 domain (`OneClickRouter` / `1`, verifying contract the
    /// proxy), the owner and the upgrade authority (docs/upgrades.md).
    function initialize(address initialOwner, address upgrader_, bool migrating_) external initializer {
        __VenueUpgradeable_init(upgrader_, migrating_);
        __EIP712_init("OneClickRouter", "1");
        __Ownable_init(initialOwner);
    }

    // ----------------------------------------------------------------- Admin

    /// @inheritdoc IOneClickRouter
    function setStockRouter(address stockRouter_) external onlyOwner {
        if (stockRouter != address(0)) revert StockRouterAlreadySet();
        if (stockRouter_ == address(0)) revert ZeroAddress();
        stockRouter = stockRouter_;
        emit StockRouterSet(stockRouter_);
    }

    // ------------------------------------------------------------------ User

    /// @inheritdoc IOneClickRouter
    function delegateBySig(address user, address delegatee, uint32 deadline, bytes calldata signature)
        external
        onlyViaProxy
    {
        if (block.timestamp > deadline) revert SignatureExpired(deadline);
        if (delegatee == address(0)) revert ZeroAddress();
        uint64 nonce = _delegationNonce(user, delegatee);
        (address recovered, ECDSA.RecoverError err,) =
            ECDSA.tryRecoverCalldata(_digest(user, delegatee, nonce, deadline), signature);
        if (err != ECDSA.RecoverError.NoError || recovered != user) revert InvalidSigner(recovered, user);
        // Past every nonce any delegatee's signature could carry now: one signature, one delegation.
        nonces[user] = nonce + 1;
        // Fixed, not signed (the spec's Delegate has no lifetime field): enabling again extends it.
        uint64 expiresAt = uint64(block.timestamp) + DELEGATION_LIFETIME;
        delegateOf[user] = delegatee;
        delegationExpiresAt[user] = expiresAt;
        emit Delegated(user, delegatee, nonce, deadline, expiresAt);
    }

    /// @inheritdoc IOneClickRouter
    function undelegate() external {
        address delegatee = delegateOf[msg.sender];
        if (delegatee != address(0)) _endDelegation(msg.sender, delegatee);
        // Always, delegated or not: a delegation signed and not submitted must die with this call.
        uint64 next = nonces[msg.sender] + 1;
        nonces[msg.sender] = next;
        emit NoncesInvalidated(msg.sender, next);
    }

    // ------------------------------------------------------------- Delegatee

    /// @inheritdoc IOneClickRouter
    function revokeDelegation(address user) external {
        if (delegateOf[user] != msg.sender || msg.sender == address(0)) revert NotDelegatee(user, msg.sender);
        _endDelegation(user, msg.sender);
        _refuse(user, msg.sender);
    }

    /// @inheritdoc IOneClickRouter
    function refuseDelegation(address user) external {
        if (delegateOf[user] == msg.sender) _endDelegation(user, msg.sender);
        _refuse(user, msg.sender);
    }

    /// @inheritdoc IOneClickRouter
    function execute(address user, bytes calldata data) external onlyViaProxy returns (bytes memory result) {
        if (delegateOf[user] != msg.sender) revert NotDelegatee(user, msg.sender);
        uint64 expiresAt = delegationExpiresAt[user];
        if (block.timestamp >= expiresAt) revert DelegationExpired(user, expiresAt);
        address target = stockRouter;
        if (target == address(0)) revert StockRouterNotSet();
        bool ok;
        (ok, result) = target.call(abi.encodePacked(data, user));
        if (!ok) {
            // Bubble the StockRouter's revert data verbatim so callers decode it with its ABI.
            assembly ("memory-safe") {
                revert(add(result, 0x20), mload(result))
            }
        }
        emit Executed(user, msg.sender, data.length >= 4 ? bytes4(data[:4]) : bytes4(0));
    }

    function _endDelegation(address user, address delegatee) private {
        delete delegateOf[user];
        delete delegationExpiresAt[user];
        emit Undelegated(user, delegatee);
    }

    /// @dev Moves the nonce `user`'s signatures naming `delegatee` must carry past every one signed so
    /// far, without touching the nonce of any other delegatee (a delegatee can refuse delegations to
    /// itself, never cancel one to someone else).
    function _refuse(address user, address delegatee) private {
        uint64 offset = nonceOffset[user][delegatee] + 1;
        nonceOffset[user][delegatee] = offset;
        emit DelegationsRefused(user, delegatee, nonces[user] + offset);
    }

    // ------------------------------------------------------------------ Owner

    /// @notice Accepts the ownership offered to the direct caller.
    /// @dev `msg.sender`, never an ERC-2771 sender: a delegatee can never take ownership for a user.
    function acceptOwnership() public override {
        if (pendingOwner() != msg.sender) revert OwnableUnauthorizedAccount(msg.sender);
        _transferOwnership(msg.sender);
    }

    // ----------------------------------------------------------------- Views

    /// @inheritdoc IOneClickRouter
    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    /// @inheritdoc IOneClickRouter
    function delegateDigest(address user, address delegatee, uint64 nonce, uint32 deadline)
        external
        view
        returns (bytes32)
    {
        return _digest(user, delegatee, nonce, deadline);
    }

    /// @inheritdoc IOneClickRouter
    function delegationNonce(address user, address delegatee) external view returns (uint64) {
        return _delegationNonce(user, delegatee);
    }

    /// @inheritdoc IOneClickRouter
    function activeDelegateOf(address user) external view returns (address delegatee, uint64 expiresAt) {
        expiresAt = delegationExpiresAt[user];
        if (block.timestamp < expiresAt) delegatee = delegateOf[user];
    }

    function _delegationNonce(address user, address delegatee) private view returns (uint64) {
        return nonces[user] + nonceOffset[user][delegatee];
    }

    function _digest(address user, address delegatee, uint64 nonce, uint32 deadline) private view returns (bytes32) {
        return _hashTypedDataV4(keccak256(abi.encode(DELEGATE_TYPEHASH, user, delegatee, nonce, deadline)));
    }

    // ---------------------------------------------------------- Migration

    /// @inheritdoc IOneClickRouter
    function migrateDelegations(address[] calldata users, address[] calldata delegatees, uint64[] calldata nonces_)
        external
        onlyMigrator
    {
        if (users.length != delegatees.length || users.length != nonces_.length) revert LengthMismatch();
        // A 0.1.0 delegation never expired: it is carried over for the same fixed time as a new one,
        // counted from this call, then must be signed again.
        uint64 expiresAt = uint64(block.timestamp) + DELEGATION_LIFETIME;
        for (uint256 i; i < users.length; ++i) {
            address user = users[i];
            address delegatee = delegatees[i];
            uint64 carried = nonces_[i];
            uint64 current = nonces[user];
            // Every delegateBySig and undelegate on this router advances the nonce: a user whose nonce
            // moved here acted after the snapshot (or this user was carried over already, a rerun), so
            // what this router holds is newer and stays. The nonce never goes down: a signature spent
            // here is never valid again.
            if (current != 0) {
                if (carried > current) nonces[user] = carried;
                emit DelegationMigrationKept(user, carried, carried > current ? carried : current);
                continue;
            }
            // A delegatee that refused this user here (refuseDelegation, revokeDelegation: the API's
            // 1ct/disable) after the snapshot is not given the delegation back; the nonce still is.
            if (delegatee != address(0) && nonceOffset[user][delegatee] != 0) delegatee = address(0);
            uint64 until = delegatee == address(0) ? 0 : expiresAt;
            delegateOf[user] = delegatee;
            delegationExpiresAt[user] = until;
            nonces[user] = carried;
            emit DelegationMigrated(user, delegatee, carried, until);
        }
    }
}
