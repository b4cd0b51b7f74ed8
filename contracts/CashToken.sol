// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {ICashToken} from "./interfaces/ICashToken.sol";

/// @title CashToken
/// @notice Demo cash token: `Demo USD Coin` (`USDC`), 6 decimals, minted by the owner.
contract CashToken is ICashToken, ERC20, Ownable2Step {
    constructor(address initialOwner) ERC20("Demo USD Coin", "USDC") Ownable(initialOwner) {}

    // ----------------------------------------------------------------- Admin

    /// @inheritdoc ICashToken
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }

    // ----------------------------------------------------------------- Views

    function decimals() public pure override returns (uint8) {
        return 6;
    }
}
