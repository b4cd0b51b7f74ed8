// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC1967} from "@openzeppelin/contracts/interfaces/IERC1967.sol";

/// @title IVenueUpgradeable
/// @notice What every upgradeable contract of the venue answers: it sits behind an ERC-1967 proxy
/// (UUPS) whose implementation only the upgrade authority, the `upgrader`, may replace. The upgrader
/// is a role of its own, distinct from the owner that configures the contract, so that an operator can
/// put upgrades behind a timelock or a multisig while day-to-day configuration stays with a hot key.
/// Every upgrade emits ERC-1967's `Upgraded(implementation)` from the proxy.
interface IVenueUpgradeable is IERC1967 {
    /// @notice `caller` is not the upgrade authority (or, for `acceptUpgrader`, not the pending one).
    error NotUpgrader(address caller);

    /// @notice The implementation was called directly instead of through its proxy.
    error ImplementationCalledDirectly();

    /// @notice The upgrade authority given is the zero address.
    error ZeroUpgrader();

    /// @notice A migration function was called outside the migration window, or not by the upgrader.
    error NotMigrating(address caller);

    /// @notice The migration window of a contract set up to take over an earlier deployment's state
    /// closed for good (docs/upgrades.md, "Deployments from before the proxies").
    event MigrationFinished();

    /// @notice `upgrader` offered the upgrade authority to `pending`; it moves when `pending` accepts.
    event UpgraderTransferStarted(address indexed upgrader, address indexed pending);

    /// @notice The upgrade authority moved from `previous` to `upgrader` (from zero at initialization).
    event UpgraderTransferred(address indexed previous, address indexed upgrader);

    /// @notice The account allowed to upgrade this proxy (`upgradeToAndCall`).
    function upgrader() external view returns (address);

    /// @notice The account the upgrade authority was offered to, zero when none.
    function pendingUpgrader() external view returns (address);

    /// @notice Offers the upgrade authority to `next` (two steps, as Ownable2Step). Upgrader only.
    function transferUpgrader(address next) external;

    /// @notice Takes the upgrade authority offered to the caller.
    function acceptUpgrader() external;

    /// @notice Whether the migration window is open: only then may the upgrader call the contract's
    /// `migrate*` functions, which import an earlier deployment's state. It opens only at
    /// initialization and, once closed, never again; the upgrader could install any code anyway, so
    /// the window grants it no power it does not hold.
    function migrating() external view returns (bool);

    /// @notice Closes the migration window for good. Upgrader only.
    function finishMigration() external;
}
