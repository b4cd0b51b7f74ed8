/** Fixed-point scales of the stock venue's on-chain amounts, defined once for every stock module. */

/** mUSD, the Cashier's internal dollar balance, has 18 decimals. */
export const MUSD_DECIMALS = 18;
