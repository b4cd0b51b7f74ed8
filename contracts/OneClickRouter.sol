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

    // ----------------------------------------------------------------- State

    /// @inheritdoc IOneClickRouter
    address public stockRouter;
    /// @inheritdoc IOneClickRouter
    mapping(address user => address) public delegateOf;
    /// @inheritdoc IOneClickRouter
    mapping(address user => uint64) public nonces;

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
        uint64 nonce = nonces[user];
        (address recovered, ECDSA.RecoverError err,) =
            ECDSA.tryRecoverCalldata(_digest(user, delegatee, nonce, deadline), signature);
        if (err != ECDSA.RecoverError.NoError || recovered != user) revert InvalidSigner(recovered, user);
        nonces[user] = nonce + 1;
        delegateOf[user] = delegatee;
        emit Delegated(user, delegatee, nonce, deadline);
    }

    /// @inheritdoc IOneClickRouter
    function undelegate() external {
        address delegatee = delegateOf[msg.sender];
        if (delegatee == address(0)) revert NotDelegated(msg.sender);
        delete delegateOf[msg.sender];
        emit Undelegated(msg.sender, delegatee);
    }

    // ------------------------------------------------------------- Delegatee

    /// @inheritdoc IOneClickRouter
    function revokeDelegation(address user) external {
        if (delegateOf[user] != msg.sender || msg.sender == address(0)) revert NotDelegatee(user, msg.sender);
        delete delegateOf[user];
        emit Undelegated(user, msg.sender);
    }

    /// @inheritdoc IOneClickRouter
    function execute(address user, bytes calldata data) external onlyViaProxy returns (bytes memory result) {
        if (delegateOf[user] != msg.sender) revert NotDelegatee(user, msg.sender);
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
        for (uint256 i; i < users.length; ++i) {
            delegateOf[users[i]] = delegatees[i];
            nonces[users[i]] = nonces_[i];
            emit DelegationMigrated(users[i], delegatees[i], nonces_[i]);
        }
    }
}
