// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ICommonErrors} from "./ICommonErrors.sol";

/// @title IOneClickRouter
/// @notice One Click delegation. A user signs an EIP-712 `Delegate` (domain `OneClickRouter` / `1`);
/// anyone may submit it. The delegatee may then call the StockRouter for the user through
/// `execute`, which appends the user to the calldata (ERC-2771), so the StockRouter sees the user as
/// the sender.
interface IOneClickRouter is ICommonErrors {
    error SignatureExpired(uint32 deadline);
    /// @notice The signature does not recover to the user (`recovered` is zero for a malformed signature).
    error InvalidSigner(address recovered, address expected);
    error NotDelegatee(address user, address caller);
    error NotDelegated(address user);
    error StockRouterAlreadySet();
    error StockRouterNotSet();

    event Delegated(address indexed user, address indexed delegatee, uint64 nonce, uint32 deadline);
    event Undelegated(address indexed user, address indexed delegatee);
    event Executed(address indexed user, address indexed delegatee, bytes4 selector);
    event StockRouterSet(address indexed stockRouter);

    /// @notice Sets the StockRouter calls are forwarded to. Owner only, once.
    function setStockRouter(address stockRouter) external;

    /// @notice Records `delegatee` for `user` from `user`'s signature over
    /// `Delegate(user, delegatee, nonces[user], deadline)`; consumes the nonce.
    function delegateBySig(address user, address delegatee, uint32 deadline, bytes calldata signature) external;

    /// @notice Ends the caller's delegation.
    function undelegate() external;

    /// @notice Ends `user`'s delegation; only by the current delegatee.
    function revokeDelegation(address user) external;

    /// @notice Calls the StockRouter with `data` on behalf of `user`; only by `user`'s delegatee.
    /// Reverts of the StockRouter are bubbled verbatim.
    function execute(address user, bytes calldata data) external returns (bytes memory result);

    function stockRouter() external view returns (address);
    function delegateOf(address user) external view returns (address);
    function nonces(address user) external view returns (uint64);
    // solhint-disable-next-line func-name-mixedcase
    function DELEGATE_TYPEHASH() external view returns (bytes32);
    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() external view returns (bytes32);
    /// @notice The EIP-712 digest a user signs to delegate.
    function delegateDigest(address user, address delegatee, uint64 nonce, uint32 deadline)
        external
        view
        returns (bytes32);

    /// @notice `user`'s delegation of the earlier deployment was carried over.
    event DelegationMigrated(address indexed user, address indexed delegatee, uint64 nonce);

    /// @notice Carries delegations over with their signature nonces (a zero delegatee carries only the
    /// nonce). Only the upgrader, only while the migration window is open.
    function migrateDelegations(address[] calldata users, address[] calldata delegatees, uint64[] calldata nonces_)
        external;
}
