// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {IStock} from "./interfaces/IStock.sol";

/// @title Stock
/// @notice One tokenized stock: ERC-20 wallet balances plus exchange balances held by this contract.
/// @dev Exchange balances are backed 1:1 by this contract's own ERC-20 balance. Plain transfers to
/// the contract are refused so that the backing stays exact.
contract Stock is IStock, ERC20, Ownable2Step {
    // ----------------------------------------------------------------- State

    /// @inheritdoc IStock
    address public router;

    /// @inheritdoc IStock
    mapping(address user => uint256) public stockBalance;

    /// @inheritdoc IStock
    mapping(address user => uint256) public lockedStockBalance;

    modifier onlyRouter() {
        if (msg.sender != router) revert NotRouter(msg.sender);
        _;
    }

    constructor(string memory name_, string memory symbol_, address initialOwner)
        ERC20(name_, symbol_)
        Ownable(initialOwner)
    {}

    // ----------------------------------------------------------------- Admin

    /// @inheritdoc IStock
    function setRouter(address router_) external onlyOwner {
        if (router_ == address(0)) revert ZeroAddress();
        router = router_;
        emit RouterSet(router_);
    }

    /// @inheritdoc IStock
    function mint(address to, uint256 amount) external onlyOwner {
        _mint(to, amount);
    }

    // -------------------------------------------------------------- Exchange

    /// @inheritdoc IStock
    function depositToExchange(address user, uint256 amount) external onlyRouter {
        if (amount == 0) revert ZeroAmount();
        // The user approves the router, not this contract: one spender for cash and stock deposits.
        _spendAllowance(user, msg.sender, amount);
        _transfer(user, address(this), amount);
        stockBalance[user] += amount;
        emit StockDeposited(user, amount);
    }

    /// @inheritdoc IStock
    function withdrawFromExchange(address user, uint256 amount) external onlyRouter {
        if (amount == 0) revert ZeroAmount();
        _debitFree(user, amount);
        _transfer(address(this), user, amount);
        emit StockWithdrawn(user, amount);
    }

    /// @inheritdoc IStock
    function lock(address user, uint256 amount) external onlyRouter {
        _debitFree(user, amount);
        lockedStockBalance[user] += amount;
    }

    /// @inheritdoc IStock
    function unlock(address user, uint256 amount) external onlyRouter {
        _debitLocked(user, amount);
        stockBalance[user] += amount;
    }

    /// @inheritdoc IStock
    function mintToExchange(address user, uint256 amount) external onlyRouter {
        _mint(address(this), amount);
        stockBalance[user] += amount;
    }

    /// @inheritdoc IStock
    function burnLocked(address user, uint256 amount) external onlyRouter {
        _debitLocked(user, amount);
        _burn(address(this), amount);
    }

    // ---------------------------------------------------------------- ERC-20

    function transfer(address to, uint256 value) public override returns (bool) {
        if (to == address(this)) revert ERC20InvalidReceiver(to);
        return super.transfer(to, value);
    }

    function transferFrom(address from, address to, uint256 value) public override returns (bool) {
        if (to == address(this)) revert ERC20InvalidReceiver(to);
        return super.transferFrom(from, to, value);
    }

    // -------------------------------------------------------------- Internal

    function _debitFree(address user, uint256 amount) private {
        uint256 available = stockBalance[user];
        if (available < amount) revert InsufficientStockBalance(available, amount);
        unchecked {
            stockBalance[user] = available - amount;
        }
    }

    function _debitLocked(address user, uint256 amount) private {
        uint256 available = lockedStockBalance[user];
        if (available < amount) revert InsufficientStockBalance(available, amount);
        unchecked {
            lockedStockBalance[user] = available - amount;
        }
    }
}
