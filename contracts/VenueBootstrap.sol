// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {UUPSUpgradeable} from "@openzeppelin/contracts/proxy/utils/UUPSUpgradeable.sol";

/// @title VenueBootstrap
/// @notice The first implementation of a venue proxy deployed at the same address on every chain
/// (docs/contracts.md, "Same addresses on every chain"). A proxy is created through the CREATE2
/// factory as `VenueProxy(VenueBootstrap, bootstrap(deployer))`: its address then depends on this
/// contract's code, the proxy's code, the deployer and the salt only, never on the venue's
/// implementation (which changes with every release) or on the chain. The only thing the bootstrap
/// allows is the deployer's one upgrade to the real implementation, with its `initialize` call
/// (`upgradeToAndCall`), after which the proxy is the venue's contract as a plain deployment makes it.
/// @dev Frozen: a change to this file (or to VenueProxy.sol) moves every deterministic address, so
/// chains deployed before and after would differ. The deployer's slot is an ERC-7201 namespace, so
/// it never collides with the real implementation's storage, and it is cleared by the upgrade.
contract VenueBootstrap is UUPSUpgradeable {
    /// @custom:storage-location erc7201:tokex.storage.VenueBootstrap
    struct VenueBootstrapStorage {
        address deployer;
    }

    // keccak256(abi.encode(uint256(keccak256("tokex.storage.VenueBootstrap")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant VENUE_BOOTSTRAP_STORAGE =
        0x29c9567fc49df1a9221fc2e9a9a48d5f5e0a12861b38bead34fed2836cb10000;

    error ZeroDeployer();
    error AlreadyBootstrapped();
    error NotDeployer(address caller);

    /// @notice Names the only account that may upgrade the proxy. Run by the proxy's constructor, so
    /// there is no moment in which someone else could name themselves.
    function bootstrap(address deployer_) external onlyProxy {
        if (deployer_ == address(0)) revert ZeroDeployer();
        VenueBootstrapStorage storage $ = _venueBootstrapStorage();
        if ($.deployer != address(0)) revert AlreadyBootstrapped();
        $.deployer = deployer_;
    }

    /// @notice The account that may upgrade the proxy to its real implementation.
    function deployer() external view returns (address) {
        return _venueBootstrapStorage().deployer;
    }

    /// @dev The deployer only, once: the slot is cleared before the real implementation takes over.
    function _authorizeUpgrade(address) internal override {
        VenueBootstrapStorage storage $ = _venueBootstrapStorage();
        if (msg.sender != $.deployer) revert NotDeployer(msg.sender);
        delete $.deployer;
    }

    function _venueBootstrapStorage() private pure returns (VenueBootstrapStorage storage $) {
        assembly {
            $.slot := VENUE_BOOTSTRAP_STORAGE
        }
    }
}
