/**
 * The tokenized-stock API's actions, one a file, grouped as the API's route groups (src/stock/routes/*-routes.ts):
 * each takes a StockTransport (`createStockTransport`) and its parameters, and exports its
 * `…Parameters`, `…ReturnType` and `…ErrorType`. StockClient's methods call them; importing them
 * one by one leaves the rest out of a bundle.
 */

// market
export * from './market/get-config.ts';
export * from './market/get-corporate-actions.ts';
export * from './market/get-price-history.ts';
export * from './market/get-price.ts';
export * from './market/get-symbols.ts';
export * from './market/get-underlying-price.ts';
export * from './market/sync-time.ts';

// portfolio
export * from './portfolio/get-balance.ts';
export * from './portfolio/get-positions.ts';
export * from './portfolio/get-user.ts';

// orders
export * from './orders/cancel-order-calldata.ts';
export * from './orders/get-order.ts';
export * from './orders/get-orders-by-tx.ts';
export * from './orders/list-orders.ts';
export * from './orders/order-calldata.ts';
export * from './orders/order-with-deposit-calldata.ts';
export * from './orders/record-order-tx.ts';
export * from './orders/send-cancel-order.ts';
export * from './orders/send-order-with-deposit.ts';
export * from './orders/send-order.ts';
export * from './orders/validate-stock-order.ts';

// operations
export * from './operations/get-operation.ts';
export * from './operations/list-operations.ts';
export * from './operations/operation-calldata.ts';
export * from './operations/operation-path.ts';
export * from './operations/record-operation-tx.ts';
export * from './operations/send-operation.ts';

// cash
export * from './cash/cash-deposit-calldata.ts';
export * from './cash/cash-withdrawal-calldata.ts';
export * from './cash/get-cash-deposit.ts';
export * from './cash/get-cash-withdrawal.ts';
export * from './cash/list-cash-deposits.ts';
export * from './cash/list-cash-withdrawals.ts';
export * from './cash/record-cash-deposit-tx.ts';
export * from './cash/record-cash-withdrawal-tx.ts';
export * from './cash/send-cash-deposit.ts';
export * from './cash/send-cash-withdrawal.ts';

// stock-transfer
export * from './stock-transfer/get-stock-deposit.ts';
export * from './stock-transfer/get-stock-withdrawal.ts';
export * from './stock-transfer/list-stock-deposits.ts';
export * from './stock-transfer/list-stock-withdrawals.ts';
export * from './stock-transfer/record-stock-deposit-tx.ts';
export * from './stock-transfer/record-stock-withdrawal-tx.ts';
export * from './stock-transfer/send-stock-deposit.ts';
export * from './stock-transfer/send-stock-withdrawal.ts';
export * from './stock-transfer/stock-deposit-calldata.ts';
export * from './stock-transfer/stock-withdrawal-calldata.ts';

// one-click
export * from './one-click/disable-one-click.ts';
export * from './one-click/enable-one-click.ts';
export * from './one-click/get-one-click-status.ts';
export * from './one-click/prepare-one-click.ts';
export * from './one-click/submit-one-click.ts';
