// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC1967Proxy} from "@openzeppelin/contracts/proxy/ERC1967/ERC1967Proxy.sol";

/// @title VenueProxy
/// @notice The ERC-1967 proxy in front of every upgradeable contract of the venue (docs/upgrades.md).
/// It holds the contract's state and delegates every call to its implementation; the implementation
/// (UUPS, see {VenueUpgradeable}) decides who may replace it. Named so that the build emits its
/// bytecode with the venue's own contracts.
contract VenueProxy is ERC1967Proxy {
    /// @param implementation The first implementation.
    /// @param data The initializer call, run in the proxy's context at construction.
    constructor(address implementation, bytes memory data) payable ERC1967Proxy(implementation, data) {}
}
