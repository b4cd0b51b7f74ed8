/**
 * The deployer's entry: every name callers import from here, re-exported from the part that holds it
 * (issue 62 split this module by concern; callers did not change):
 *
 *   deploy-deterministic-address.ts  the CREATE2 factory's constants and the addresses it gives
 *   deploy-create2-factory.ts        the factory found on a chain, or put there
 *   deploy-tx-batch.ts               the batch every deployment sends through (TxBatch)
 *   deploy-stock-venue.ts            the stock venue: deployStack, its VenueDeployer, operators
 *   deploy-venues.ts                 the record's venues kept or deployed (ensureVenues)
 *   deploy-price-feeds.ts            the on-chain oracle (ensurePriceFeeds)
 *
 * The perp venue's deployment is deploy-perp-venue.ts, the dividend distributor's part
 * deploy-dividend-distributor.ts. Modules in src/chain import the part they use, not this entry, so
 * that no part imports back through it.
 */
export {
  CREATE2_FACTORY,
  CREATE2_FACTORY_DEPLOY_TX,
  CREATE2_FACTORY_SIGNER,
  deterministicAddress,
  deterministicProxyAddress,
  deterministicSalt,
  venueBootstrapAddress,
  type DeployNote,
} from './deploy-deterministic-address.ts';
export { ensureCreate2Factory } from './deploy-create2-factory.ts';
export { TX_BATCH_REBROADCAST_AFTER_MS, TX_BATCH_RECEIPT_TIMEOUT_MS, TxBatch } from './deploy-tx-batch.ts';
export {
  CASH_TOKEN_DECIMALS,
  DEMO_DEFAULTS,
  deployStack,
  grantStockOperators,
  stockDeploymentOf,
  stockVenueDeployer,
  type Deployment,
  type DeploymentContracts,
  type DeployStackOptions,
  type StockListing,
  type StockVenueDeployment,
} from './deploy-stock-venue.ts';
export {
  ensureVenues,
  isDeploymentLive,
  isVenueLive,
  type EnsureVenuesResult,
  type VenueDeployContext,
  type VenueDeployer,
  type VenueDeployReason,
} from './deploy-venues.ts';
export { ensurePriceFeeds, type PriceFeedSetup, type PriceFeedsResult } from './deploy-price-feeds.ts';
