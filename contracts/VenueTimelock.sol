// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {TimelockController} from "@openzeppelin/contracts/governance/TimelockController.sol";

/// @title VenueTimelock
/// @notice The owner and upgrader of every stateful contract of a venue (docs/security.md, "Owner and
/// upgrader"): OpenZeppelin's TimelockController unchanged. An owner change or an upgrade is scheduled
/// (`CallScheduled`, public), waits `getMinDelay()` seconds and only then may be executed; a canceller
/// can cancel it meanwhile. The timelock is its own admin: roles and the delay change only through it.
/// @dev Deployed with delay 0 so that the venue's deployment can hand its contracts over in the same
/// run; the deployment then sets the configured delay through the timelock itself (`updateDelay`).
contract VenueTimelock is TimelockController {
    constructor(uint256 minDelay, address[] memory proposers, address[] memory executors, address admin)
        TimelockController(minDelay, proposers, executors, admin)
    {}
}
