// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {Initializable} from "@openzeppelin/contracts-upgradeable/proxy/utils/Initializable.sol";
import {UUPSUpgradeable} from "@openzeppelin/contracts-upgradeable/proxy/utils/UUPSUpgradeable.sol";
import {IVenueUpgradeable} from "./interfaces/IVenueUpgradeable.sol";

/// @title VenueUpgradeable
/// @notice The upgrade plumbing every stateful contract of the venue shares (docs/upgrades.md):
/// UUPS behind an ERC-1967 proxy, an `upgrader` role of its own, initializers locked on the
/// implementation, and a cheap guard against calls that reach the implementation directly.
/// @dev UUPS rather than a transparent proxy: the proxy is the minimal ERC-1967 one (no admin check on
/// every call, no ProxyAdmin contract per proxy) and the upgrade rule lives in the implementation,
/// where the storage-layout check (upgrades-core, in `npm test`) also verifies that every new
/// implementation keeps `upgradeToAndCall`. The role's storage is an ERC-7201 namespace, so it never
/// collides with the contract's own variables, which start at slot 0.
abstract contract VenueUpgradeable is IVenueUpgradeable, Initializable, UUPSUpgradeable {
    /// @custom:storage-location erc7201:tokex.storage.VenueUpgradeable
    struct VenueUpgradeableStorage {
        address upgrader;
        address pendingUpgrader;
        bool migrating;
    }

    // keccak256(abi.encode(uint256(keccak256("tokex.storage.VenueUpgradeable")) - 1)) & ~bytes32(uint256(0xff))
    bytes32 private constant VENUE_UPGRADEABLE_STORAGE =
        0x1b12a05abaa3605c126a71a65585cc12b646080b61183ad0f9cefc0515ff4a00;

    /// @dev The implementation's own address: a call whose `this` is it did not come through a proxy.
    /// @custom:oz-upgrades-unsafe-allow state-variable-immutable
    address private immutable _implementationSelf = address(this);

    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor() {
        // Nobody can initialize (and so own) the implementation itself.
        _disableInitializers();
    }

    /// @dev For entry points that take users' tokens: on the implementation they would land in a
    /// contract whose storage nobody administers. An immutable compare, a few gas.
    modifier onlyViaProxy() {
        if (address(this) == _implementationSelf) revert ImplementationCalledDirectly();
        _;
    }

    /// @dev Only the upgrader, and only while the migration window is open.
    modifier onlyMigrator() {
        VenueUpgradeableStorage storage $ = _venueUpgradeableStorage();
        if (!$.migrating || msg.sender != $.upgrader) revert NotMigrating(msg.sender);
        _;
    }

    /// @param migrating_ Opens the migration window: the contract takes over an earlier deployment's
    /// state before it is used (docs/upgrades.md); false for a new venue.
    // solhint-disable-next-line func-name-mixedcase
    function __VenueUpgradeable_init(address upgrader_, bool migrating_) internal onlyInitializing {
        if (upgrader_ == address(0)) revert ZeroUpgrader();
        VenueUpgradeableStorage storage $ = _venueUpgradeableStorage();
        $.upgrader = upgrader_;
        $.migrating = migrating_;
        emit UpgraderTransferred(address(0), upgrader_);
    }

    /// @inheritdoc IVenueUpgradeable
    function migrating() external view returns (bool) {
        return _venueUpgradeableStorage().migrating;
    }

    /// @inheritdoc IVenueUpgradeable
    function finishMigration() external onlyMigrator {
        _beforeMigrationFinished();
        _venueUpgradeableStorage().migrating = false;
        emit MigrationFinished();
    }

    /// @dev A contract's last check of what was migrated into it (the Cashier's solvency).
    function _beforeMigrationFinished() internal view virtual {}

    /// @inheritdoc IVenueUpgradeable
    function upgrader() public view returns (address) {
        return _venueUpgradeableStorage().upgrader;
    }

    /// @inheritdoc IVenueUpgradeable
    function pendingUpgrader() external view returns (address) {
        return _venueUpgradeableStorage().pendingUpgrader;
    }

    /// @inheritdoc IVenueUpgradeable
    function transferUpgrader(address next) external {
        VenueUpgradeableStorage storage $ = _venueUpgradeableStorage();
        if (msg.sender != $.upgrader) revert NotUpgrader(msg.sender);
        $.pendingUpgrader = next;
        emit UpgraderTransferStarted(msg.sender, next);
    }

    /// @inheritdoc IVenueUpgradeable
    function acceptUpgrader() external {
        VenueUpgradeableStorage storage $ = _venueUpgradeableStorage();
        if (msg.sender != $.pendingUpgrader || msg.sender == address(0)) revert NotUpgrader(msg.sender);
        address previous = $.upgrader;
        $.upgrader = msg.sender;
        delete $.pendingUpgrader;
        emit UpgraderTransferred(previous, msg.sender);
    }

    /// @dev `msg.sender`, never an ERC-2771 sender: a One Click delegation never grants an upgrade.
    function _authorizeUpgrade(address) internal view override {
        if (msg.sender != _venueUpgradeableStorage().upgrader) revert NotUpgrader(msg.sender);
    }

    function _venueUpgradeableStorage() private pure returns (VenueUpgradeableStorage storage $) {
        assembly {
            $.slot := VENUE_UPGRADEABLE_STORAGE
        }
    }
}
