/**
 * The venue's on-chain oracle (docs/contracts.md, "PriceFeedHub and PriceFeed"): the hub, a feed per
 * symbol, the publishers and the StockRouter's checks made what the set-up says, the chain read as
 * the truth; owner changes go through the venue's timelock where it owns the contracts.
 */
import { getAddress, type Address } from 'viem';
import { AppError, ChainRevertError } from '../errors/app-error.ts';
import { priceFeedAbi, priceFeedBytecode, priceFeedHubAbi, stockRouterAbi } from './abi/generated/index.ts';
import { toChainError, type ChainPublicClient, type ChainWalletClient } from './chain-client.ts';
import { TxBatch } from './deploy-tx-batch.ts';
import type { DeployedCode } from './deployment-file.ts';
import { ownerCalls, type OwnerCallResult, type OwnerCallSpec } from './owner-actions.ts';

/** What the venue's oracle should look like (docs/contracts.md, "PriceFeedHub and PriceFeed"). */
export interface PriceFeedSetup {
  /** Every symbol that gets a feed: the listed stocks and others published too (the perp indices' BTC, ETH). */
  symbols: readonly string[];
  /** The listed stocks by symbol: the StockRouter checks their fills against their feeds. */
  stocks: Readonly<Record<string, Address>>;
  /** Accounts allowed to publish. */
  publishers: readonly Address[];
  /**
   * The StockRouter's tolerance (1..5000 bps); 0 removes the stocks' feeds from the router and turns
   * its `requireOracle` off (fills unchecked: the embedded demo's explicit opt-out), any other value
   * turns it on.
   */
  toleranceBps: number;
  /** The StockRouter's maximum answer age, seconds. */
  maxAgeSeconds: number;
}

export interface PriceFeedsResult {
  /** Undefined only when `create` was false and there is none. */
  hub?: Address;
  /** Feed per symbol (only the symbols that have one). */
  feeds: Record<string, Address>;
  /** What was done now, for the log: `hub`, `feed AAPL`, `publisher 0x…`, `router AAPL`. */
  changes: string[];
  /** What should be done but was not, for want of the owner's wallet. */
  missing: string[];
  /** Owner changes scheduled in the venue's timelock, not yet in effect (a delay > 0): the changes' names. */
  scheduled: string[];
  /** The timelock's answers for `scheduled` (when each is executable). */
  pending: OwnerCallResult[];
  /** The record's `code` entries of what was deployed now (`priceFeedHub` when the hub is new). */
  code: Record<string, DeployedCode>;
}

/** A venue feed's description: `AAPL / USD`. */
const feedDescriptionOf = (symbol: string): string => `${symbol} / USD`;
const symbolOfFeedDescription = (d: string): string | undefined => /^([A-Z0-9.\-]{1,20}) \/ USD$/.exec(d)?.[1];
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000' as Address;
/** The decimals of the venue's feeds. */
const VENUE_FEED_DECIMALS = 8;

/**
 * Makes the oracle what `setup` says, reading the chain as the truth: the hub is `hub` (the
 * record's) when it has code, else the one the StockRouter's feeds name, else a new one; a
 * symbol without a feed on the hub gets one (deployed and listed); each publisher is granted; each
 * listed stock's router check is set to its feed with the tolerance and age (or removed with
 * tolerance 0) where it differs — except a stock the owner pointed at a feed of another hub
 * (a Chainlink feed), which is left as it is. Transactions go out with `walletClient`, which must own the hub
 * and the StockRouter; without it nothing is sent and `missing` says what is left. With `create`
 * false nothing is deployed (turning the check off needs no hub). Answers undefined when there is
 * no hub and no wallet to deploy one.
 */
export async function ensurePriceFeeds(params: {
  publicClient: ChainPublicClient;
  walletClient?: ChainWalletClient;
  stockRouter: Address;
  /** The hub the deployment record names, if any. */
  hub?: Address;
  /** A new hub's upgrade authority. Default: the wallet's account. */
  upgrader?: Address;
  setup: PriceFeedSetup;
  /** Deploy the hub and the missing feeds. Default true. */
  create?: boolean;
}): Promise<PriceFeedsResult | undefined> {
  const create = params.create ?? true;
  const { publicClient, walletClient, stockRouter, setup } = params;
  const hasCode = async (address: Address) => {
    const code = await publicClient.getCode({ address });
    return code !== undefined && code !== '0x';
  };
  try {
    const configs = new Map<string, { feed: Address; decimals: number; toleranceBps: number; maxAge: number }>();
    for (const [symbol, stock] of Object.entries(setup.stocks)) {
      configs.set(symbol, await publicClient.readContract({ address: stockRouter, abi: stockRouterAbi, functionName: 'priceFeedOf', args: [stock] }));
    }
    let hub: Address | undefined = params.hub !== undefined && (await hasCode(params.hub)) ? params.hub : undefined;
    for (const c of configs.values()) {
      if (hub !== undefined) break;
      if (c.feed === ZERO_ADDRESS || !(await hasCode(c.feed))) continue;
      const named = await publicClient.readContract({ address: c.feed, abi: priceFeedAbi, functionName: 'hub' }).catch(() => undefined);
      if (named !== undefined && (await hasCode(named))) hub = named;
    }
    const changes: string[] = [];
    const missing: string[] = [];
    /** Owner changes, sent after the batch's deployments through ownerCalls. */
    const owned: Array<{ change: string; call: OwnerCallSpec }> = [];
    const tx = walletClient ? await TxBatch.open(publicClient, walletClient) : undefined;
    if (hub === undefined && create) {
      if (!tx) return undefined;
      hub = await tx.deployProxy('PriceFeedHub', 'PriceFeedHub', [], [tx.from, params.upgrader ?? tx.from]);
      changes.push('hub');
    }
    const feeds: Record<string, Address> = {};
    const isNewHub = changes.includes('hub');
    if (hub !== undefined) {
      const at = hub;
      if (!isNewHub) {
        const listed = await publicClient.readContract({ address: at, abi: priceFeedHubAbi, functionName: 'feeds' });
        for (const feed of listed) {
          const symbol = symbolOfFeedDescription(await publicClient.readContract({ address: feed, abi: priceFeedAbi, functionName: 'description' }));
          if (symbol !== undefined && feeds[symbol] === undefined) feeds[symbol] = feed;
        }
      }
      for (const symbol of new Set(create ? setup.symbols : [])) {
        if (feeds[symbol] !== undefined) continue;
        if (!tx) {
          missing.push(`feed ${symbol}`);
          continue;
        }
        const feed = await tx.deploy(`PriceFeed ${symbol}`, priceFeedAbi, priceFeedBytecode, [at, feedDescriptionOf(symbol)]);
        owned.push({ change: `feed ${symbol}`, call: { target: at, abi: priceFeedHubAbi, functionName: 'listFeed', args: [feed] } });
        feeds[symbol] = feed;
      }
      for (const publisher of new Set(setup.publishers.map((a) => getAddress(a)))) {
        const granted = !isNewHub && (await publicClient.readContract({ address: at, abi: priceFeedHubAbi, functionName: 'isPublisher', args: [publisher] }));
        if (granted) continue;
        if (!tx) {
          missing.push(`publisher ${publisher}`);
          continue;
        }
        owned.push({ change: `publisher ${publisher}`, call: { target: at, abi: priceFeedHubAbi, functionName: 'setPublisher', args: [publisher, true] } });
      }
    }
    const venueFeeds = new Set(Object.values(feeds).map((f) => f.toLowerCase()));
    for (const [symbol, stock] of Object.entries(setup.stocks)) {
      const current = configs.get(symbol)!;
      // A feed the owner set by hand (a Chainlink feed, say) stays as the owner set it.
      if (current.feed !== ZERO_ADDRESS && !venueFeeds.has(current.feed.toLowerCase())) continue;
      const feed = setup.toleranceBps > 0 ? feeds[symbol] : undefined;
      const want = feed === undefined
        ? { feed: ZERO_ADDRESS, toleranceBps: 0, maxAge: 0 }
        : { feed, toleranceBps: setup.toleranceBps, maxAge: setup.maxAgeSeconds };
      const same = current.feed.toLowerCase() === want.feed.toLowerCase() &&
        (want.feed === ZERO_ADDRESS || (current.toleranceBps === want.toleranceBps && current.maxAge === want.maxAge && current.decimals === VENUE_FEED_DECIMALS));
      if (same) continue;
      if (!tx) {
        missing.push(`router ${symbol}`);
        continue;
      }
      owned.push({ change: `router ${symbol}`, call: { target: stockRouter, abi: stockRouterAbi, functionName: 'setPriceFeed', args: [stock, want.feed, want.toleranceBps, want.maxAge] } });
    }
    // The feeds are in place before the flag is turned on (a batch's transactions are mined in order).
    const required = await publicClient.readContract({ address: stockRouter, abi: stockRouterAbi, functionName: 'requireOracle' }).catch((err: unknown) => {
      // A router from before the flag (it reverts) has nothing to set.
      if (toChainError(err) instanceof ChainRevertError) return undefined;
      throw err;
    });
    const wantRequired = setup.toleranceBps > 0;
    if (required !== undefined && required !== wantRequired) {
      if (tx) {
        owned.push({ change: `router requireOracle ${wantRequired}`, call: { target: stockRouter, abi: stockRouterAbi, functionName: 'setRequireOracle', args: [wantRequired] } });
      } else {
        missing.push(`router requireOracle ${wantRequired}`);
      }
    }
    // Deployments first (the hub, the feeds: the admin's own transactions), then the owner changes,
    // through the timelock where it owns the contract (src/chain/owner-actions.ts).
    if (tx && (changes.includes('hub') || owned.some((o) => o.change.startsWith('feed ')))) await tx.finish();
    const scheduled: string[] = [];
    const pending: OwnerCallResult[] = [];
    if (walletClient && owned.length > 0) {
      const r = await ownerCalls({ publicClient, wallet: walletClient, calls: owned.map((o) => o.call), label: 'oracle set-up' });
      if (r.done) changes.push(...owned.map((o) => o.change));
      else {
        scheduled.push(...owned.map((o) => o.change));
        pending.push(...r.results.filter((x) => !x.done));
      }
    }
    return { hub, feeds, changes, missing, scheduled, pending, code: tx && hub !== undefined ? tx.codeOf({ priceFeedHub: hub }) : {} };
  } catch (err) {
    throw err instanceof AppError ? err : toChainError(err);
  }
}
