// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title ICashToken
/// @notice The demo cash token (`Demo USD Coin`, `USDC`, 6 decimals) deposited into the Cashier.
/// @dev Its ERC-20 surface is OpenZeppelin's; this interface adds the owner's mint.
interface ICashToken {
    /// @notice Mints `amount` tokens to `to`. Owner only; used to fund demo wallets and the treasury.
    function mint(address to, uint256 amount) external;
}
