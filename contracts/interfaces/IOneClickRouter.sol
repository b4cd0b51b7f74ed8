// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ICommonErrors} from "./ICommonErrors.sol";

/// @title IOneClickRouter
/// @notice One Click delegation. A user signs an EIP-712 `Delegate` (domain `OneClickRouter` / `1`);
/// anyone may submit it. The delegatee may then call the StockRouter for the user through
/// `execute`, which appends the user to the calldata (ERC-2771), so the StockRouter sees the user as
/// the sender.
///
/// Bounds (docs/security.md, "One Click"): a delegation lasts `DELEGATION_LIFETIME` (30 days) from the
/// block that records it, then `execute` refuses it; the user's `undelegate` ends it and
/// kills every delegation they signed and nobody submitted yet; a delegatee's `refuseDelegation` (the
/// API's `1ct/disable`) kills every one naming that delegatee.
interface IOneClickRouter is ICommonErrors {
    error SignatureExpired(uint32 deadline);
    /// @notice The signature does not recover to the user (`recovered` is zero for a malformed signature).
    error InvalidSigner(address recovered, address expected);
    error NotDelegatee(address user, address caller);
    error StockRouterAlreadySet();
    error StockRouterNotSet();
    /// @notice `user`'s delegation ended at `expiresAt` (Unix seconds); the user must sign a new one.
    error DelegationExpired(address user, uint64 expiresAt);

    /// @notice `user` delegated to `delegatee` with the signature of `nonce`, until `expiresAt` (Unix seconds).
    event Delegated(address indexed user, address indexed delegatee, uint64 nonce, uint32 deadline, uint64 expiresAt);
    event Undelegated(address indexed user, address indexed delegatee);
    /// @notice `user` (`undelegate`) invalidated every delegation signature it gave so far: the next
    /// signature carries `nextNonce` (plus a delegatee's `nonceOffset`).
    event NoncesInvalidated(address indexed user, uint64 nextNonce);
    /// @notice `delegatee` refused every delegation of `user` to it signed so far: the next one must
    /// carry `nextNonce`.
    event DelegationsRefused(address indexed user, address indexed delegatee, uint64 nextNonce);
    event Executed(address indexed user, address indexed delegatee, bytes4 selector);
    event StockRouterSet(address indexed stockRouter);

    /// @notice Sets the StockRouter calls are forwarded to. Owner only, once.
    function setStockRouter(address stockRouter) external;

    /// @notice Records `delegatee` for `user` until `block.timestamp + DELEGATION_LIFETIME`, from
    /// `user`'s signature over `Delegate(user, delegatee, delegationNonce(user, delegatee), deadline)`;
    /// the signature may be submitted until `deadline`. Consumes the nonce: every other signature of
    /// `user` given so far stops working.
    function delegateBySig(address user, address delegatee, uint32 deadline, bytes calldata signature) external;

    /// @notice Ends the caller's delegation, if any, and always invalidates every delegation the
    /// caller signed that was not submitted yet (advances `nonces(caller)`). Never reverts.
    function undelegate() external;

    /// @notice Ends `user`'s delegation and refuses every delegation to the caller `user` signed so
    /// far; only by the current delegatee.
    function revokeDelegation(address user) external;

    /// @notice The caller refuses every delegation to itself that `user` signed so far (advances
    /// `nonceOffset(user, caller)`), and ends `user`'s delegation if it is the caller. Anyone may call
    /// it, for itself only: delegations to others are untouched.
    function refuseDelegation(address user) external;

    /// @notice Calls the StockRouter with `data` on behalf of `user`; only by `user`'s delegatee, only
    /// before the delegation's expiry (`DelegationExpired`). Reverts of the StockRouter are bubbled verbatim.
    function execute(address user, bytes calldata data) external returns (bytes memory result);

    function stockRouter() external view returns (address);
    /// @notice The delegatee recorded for `user`, expired or not (see `activeDelegateOf`).
    function delegateOf(address user) external view returns (address);
    /// @notice When `user`'s delegation ends, Unix seconds (0: none).
    function delegationExpiresAt(address user) external view returns (uint64);
    /// @notice `user`'s delegatee while its delegation has not expired (zero otherwise), and its expiry.
    function activeDelegateOf(address user) external view returns (address delegatee, uint64 expiresAt);
    /// @notice `user`'s signature nonce; a signature naming `delegatee` carries
    /// `nonces(user) + nonceOffset(user, delegatee)` (`delegationNonce`).
    function nonces(address user) external view returns (uint64);
    /// @notice How many times `delegatee` refused `user`'s delegations (`refuseDelegation`, `revokeDelegation`).
    function nonceOffset(address user, address delegatee) external view returns (uint64);
    /// @notice The nonce `user`'s next signature delegating to `delegatee` must carry.
    function delegationNonce(address user, address delegatee) external view returns (uint64);
    /// @notice How long every delegation lasts from the block that records it (`delegateBySig`, or
    /// `migrateDelegations` for one carried over from 0.1.0): 30 days.
    // solhint-disable-next-line func-name-mixedcase
    function DELEGATION_LIFETIME() external view returns (uint32);
    // solhint-disable-next-line func-name-mixedcase
    function DELEGATE_TYPEHASH() external view returns (bytes32);
    // solhint-disable-next-line func-name-mixedcase
    function DOMAIN_SEPARATOR() external view returns (bytes32);
    /// @notice The EIP-712 digest a user signs to delegate.
    function delegateDigest(address user, address delegatee, uint64 nonce, uint32 deadline)
        external
        view
        returns (bytes32);

    /// @notice `user`'s delegation of the earlier deployment was carried over, until `expiresAt` (0: only the nonce).
    event DelegationMigrated(address indexed user, address indexed delegatee, uint64 nonce, uint64 expiresAt);

    /// @notice `user` had acted on this router already (its nonce was not zero: a delegation or an
    /// `undelegate` after the snapshot, or a rerun of the migration), so its delegation here was kept
    /// as it is; its nonce is now `nonce`, the larger of the carried and the current one.
    event DelegationMigrationKept(address indexed user, uint64 carriedNonce, uint64 nonce);

    /// @notice Carries delegations over with their signature nonces (a zero delegatee carries only the
    /// nonce); each carried delegation expires `DELEGATION_LIFETIME` after this call. Only
    /// the upgrader, only while the migration window is open. Never lowers a nonce, so a signature
    /// spent on this router during the window is never valid again: a user whose nonce here is not
    /// zero keeps its delegation (or its `undelegate`) and gets `max(carried, current)` as its nonce
    /// (`DelegationMigrationKept`); a delegatee that refused the user here is not carried back
    /// (only the nonce is). A rerun therefore changes nothing a user did in between.
    function migrateDelegations(address[] calldata users, address[] calldata delegatees, uint64[] calldata nonces_)
        external;
}
