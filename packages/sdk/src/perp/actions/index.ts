/**
 * The perpetual API's actions, one a file, grouped as the API's route groups (src/perp/routes/*-routes.ts):
 * each takes a PerpTransport (`createPerpTransport`) and its parameters, and exports its
 * `…Parameters`, `…ReturnType` and `…ErrorType`. PerpClient's methods call them; importing them
 * one by one leaves the rest out of a bundle.
 */

// market
export * from './market/get-cached-instrument.ts';
export * from './market/get-depth.ts';
export * from './market/get-funding-rates.ts';
export * from './market/get-instruments.ts';
export * from './market/get-klines.ts';
export * from './market/get-market-trades.ts';
export * from './market/get-public-server-time.ts';
export * from './market/get-server-time.ts';
export * from './market/get-tickers.ts';
export * from './market/sync-time.ts';

// risk
export * from './risk/get-insurance-fund.ts';
export * from './risk/get-public-insurance-fund.ts';

// api-keys
export * from './api-keys/create-api-key.ts';
export * from './api-keys/delete-api-key.ts';
export * from './api-keys/list-api-keys.ts';
export * from './api-keys/prepare-api-key.ts';
export * from './api-keys/submit-api-key.ts';
export * from './api-keys/update-api-key.ts';

// trading
export * from './trading/adjust-margin.ts';
export * from './trading/amend-order.ts';
export * from './trading/batch-cancel.ts';
export * from './trading/build-amend.ts';
export * from './trading/build-order.ts';
export * from './trading/cancel-all-after.ts';
export * from './trading/cancel-order.ts';
export * from './trading/close-position.ts';
export * from './trading/fill-order.ts';
export * from './trading/get-order.ts';
export * from './trading/get-order-by-client-id.ts';
export * from './trading/place-batch-orders.ts';
export * from './trading/place-order.ts';
export * from './trading/set-leverage.ts';
export * from './trading/sign-amend.ts';
export * from './trading/sign-order.ts';
export * from './trading/submit-amend.ts';
export * from './trading/submit-batch-orders.ts';
export * from './trading/submit-close-position.ts';
export * from './trading/submit-order.ts';
export * from './trading/validate-order.ts';

// account
export * from './account/build-withdrawal.ts';
export * from './account/get-account.ts';
export * from './account/get-assets.ts';
export * from './account/get-positions.ts';
export * from './account/list-deposits.ts';
export * from './account/list-transactions.ts';
export * from './account/list-withdrawals.ts';
export * from './account/sign-withdrawal.ts';
export * from './account/submit-withdrawal.ts';
export * from './account/wait-for-withdrawal.ts';
export * from './account/withdraw.ts';

// reserves
export * from './reserves/get-account-proof.ts';

// history
export * from './history/get-open-orders.ts';
export * from './history/list-order-history.ts';
export * from './history/list-trades.ts';

// one-click
export * from './one-click/disable-one-click.ts';
export * from './one-click/enable-one-click.ts';
export * from './one-click/get-one-click.ts';
export * from './one-click/new-session-signer.ts';
export * from './one-click/prepare-one-click.ts';
export * from './one-click/start-one-click-session.ts';
export * from './one-click/submit-one-click.ts';

// liquidity
export * from './liquidity/add-liquidity.ts';
export * from './liquidity/liquidity-history.ts';
export * from './liquidity/liquidity-positions.ts';
export * from './liquidity/remove-liquidity.ts';

// approve-flow
export * from './approve-flow/deposit-collateral.ts';
export * from './approve-flow/get-approve.ts';
export * from './approve-flow/get-deposit.ts';
export * from './approve-flow/prepare-approve.ts';
export * from './approve-flow/prepare-deposit.ts';
export * from './approve-flow/submit-approve.ts';
export * from './approve-flow/submit-deposit.ts';
export * from './approve-flow/vault-transaction.ts';
