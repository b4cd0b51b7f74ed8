/**
 * What the roles of one process share: the configuration, the chain with its deployment, storage,
 * the key service, the market calendar and catalog, and the quotes. A role takes what it needs from
 * here and publishes what others read (its endpoint) back onto it.
 */
import { createSwitchableQuoteReader, type SwitchableQuoteReader } from '../marketdata/switchable-quote-reader.ts';
import type { FastifyInstance } from 'fastify';
import type { AppConfig } from '../config/app-config.ts';
import type { Logger } from '../lib/logger.ts';
import type { ApiKeyService } from '../auth/api-key-service.ts';
import type { Db } from '../storage/database.ts';
import { createQuoteCache } from '../marketdata/quote-cache.ts';
import type { QuoteReader } from '../marketdata/market-types.ts';
import type { SymbolSpec, VenueCalendar } from '../marketdata/symbol-catalog.ts';
import type { PerpVenue } from '../perp/perp-venue.ts';
import type { JournalNonceLedger } from '../perp/store/order-nonce-store.ts';
import type { StreamBroker } from '../streams/stream-broker.ts';
import { createSharedStreamBroker, type SharedStreamBroker } from './stream-wiring.ts';
import { openHistoryDatabase } from './storage-wiring.ts';
import { createRelaySignals, type RelaySignals } from '../stock/relay-signals.ts';
import type { ChainWiring } from './chain-wiring.ts';
import type { StopList } from './stop-list.ts';
import type { RoleStatusRegistry } from '../observability/role-status.ts';
import type { SandboxState } from '../sandbox/sandbox-state.ts';

/** An HTTP API a role serves. */
export interface ApiEndpoint {
  app: FastifyInstance;
  /** `http://host:port` plus the service prefix; the API's paths follow it. */
  baseUrl: string;
}

export interface StackContext {
  config: AppConfig;
  logger: Logger;
  chain: ChainWiring;
  db: Db;
  keys: ApiKeyService;
  /**
   * `MARKET_CALENDAR` with the listing's session flags, on the calendar's clock (the wall clock,
   * or `MARKET_CLOCK_START`'s): every role asks it when the market trades.
   */
  calendar: VenueCalendar;
  /** The listed stocks, with their session flags (`STOCK_SESSION_FLAGS` applied). */
  symbols: readonly SymbolSpec[];
  /**
   * The live quotes: the simulator's when the marketdata role runs in this process (it starts
   * first and provides them), otherwise the quotes table re-read every second.
   */
  quotes(): Promise<QuoteReader>;
  provideQuotes(reader: QuoteReader): void;
  /**
   * The marketdata role stopped `reader` (its lease lost): until it provides another, the roles of
   * this process read the quotes table (the feed of whichever process holds the lease now).
   */
  withdrawQuotes(reader: QuoteReader): Promise<void>;
  /** APIs served by this process, by venue. */
  endpoints: { stock?: ApiEndpoint; perp?: ApiEndpoint };
  /** Wake-ups between the stock API and the One Click relayer when both run here. */
  relaySignals: RelaySignals;
  /** The perp engine when the perp-engine role runs in this process (the perp API uses it in process). */
  perpVenue?: PerpVenue;
  /**
   * Order nonces claimed with the perp journal (perp-engine role, when no perp API of another
   * process claims any): the process's, so that claims not yet written outlive one tenure of the role.
   */
  perpNonceLedger?: JournalNonceLedger;
  /**
   * The process's broker of a venue's streams (stream-wiring.ts), made at the first call and
   * closed when the stack stops: a role that loses its lease and takes it back publishes on the
   * broker the APIs of this process already read. `onLost` hears the broker losing a batch, for
   * the publisher that runs now.
   */
  streamBroker(venue: 'perp' | 'stock'): Promise<SharedStreamBroker>;
  /** The broker of the perp streams' publisher when the perp-engine role runs in this process. */
  perpStreams?: StreamBroker;
  /** The broker of the stock streams' publisher when the indexer role runs in this process. */
  stockStreams?: StreamBroker;
  /**
   * The progress and lease state of the singleton roles run here: each role tracks a sampler on it;
   * the status publisher writes it for `/readyz` and `tokex status`, the metrics export it.
   */
  status: RoleStatusRegistry;
  /**
   * Whether this is the deployment's first chain (CHAIN_ID), the only one on a single-chain
   * deployment: it alone runs market data, the perpetual venue, the stock streams and the console,
   * and its database holds the API keys (docs/deployment.md, "Several chains").
   */
  firstChain: boolean;
  /**
   * The first chain's database (this context's own on the first chain): it holds the API keys and
   * the deployment's run-time corporate actions, which every chain takes up (docs/corporate-actions.md,
   * "Several chains").
   */
  firstChainDb: Db;
  /**
   * The perpetual venue's history (the projection's tables and cursor): on SQLite its own file,
   * opened at the first call, an earlier release's history moved into it then (storage-wiring.ts
   * openHistoryDatabase); on PostgreSQL `db`. First chain only: the venue is there.
   */
  perpHistoryDb(): Promise<Db>;
  /**
   * On the first chain's context: the stock venues of the other chains served (`stockChains` after
   * the first), each with its own chain, database, status and roles. Empty on a single chain.
   */
  otherChains: StackContext[];
  /**
   * On the first chain's context: the chains on a node (`STOCK_CHAINS`) that did not start because
   * their node did not answer; named by `/readyz` and retried in the background until their node
   * answers, when the entry leaves this list and the chain's context joins `otherChains`.
   */
  unstartedChains: UnstartedChain[];
  /**
   * The sandbox (SANDBOX, docs/sandbox.md) when on: its token and the faults in force, one for the
   * process (every chain's context holds the same): the stock API serves its routes, both APIs and
   * the executors obey its faults.
   */
  sandbox?: SandboxState;
}

/** A chain whose node did not answer at start (docs/deployment.md, "Several chains"). */
export interface UnstartedChain {
  chainId: number;
  /** Why it has not started: the last attempt's error. */
  reason: string;
  /** Its database, opened at start (it needs no node): the API's routes for the chain read it once it starts. */
  db?: Db;
  /**
   * Run, in order, once the chain has started and its roles run, before it leaves `unstartedChains`
   * (the stock API puts the chain's venue behind its routes there).
   */
  onStarted: Array<(ctx: StackContext) => Promise<void>>;
}

export function createStackContext(
  parts: Omit<StackContext, 'quotes' | 'provideQuotes' | 'withdrawQuotes' | 'endpoints' | 'relaySignals' | 'firstChain' | 'firstChainDb' | 'perpHistoryDb' | 'otherChains' | 'unstartedChains' | 'streamBroker'>,
  stops: StopList,
  /** For another chain's venue: the first chain's context, whose quotes it reads (one feed for every chain). */
  first?: StackContext,
): StackContext {
  const brokers = new Map<'perp' | 'stock', Promise<SharedStreamBroker>>();
  const streamBroker = (venue: 'perp' | 'stock'): Promise<SharedStreamBroker> => {
    let made = brokers.get(venue);
    if (made === undefined) {
      made = createSharedStreamBroker({ config: parts.config, logger: parts.logger, firstChain: first === undefined }, venue, stops);
      brokers.set(venue, made);
    }
    return made;
  };
  if (first) {
    return {
      ...parts,
      streamBroker,
      endpoints: {},
      relaySignals: createRelaySignals(),
      firstChain: false,
      firstChainDb: first.db,
      perpHistoryDb: () => Promise.reject(new Error('the perpetual venue runs on the first chain only')),
      otherChains: [],
      unstartedChains: [],
      provideQuotes: () => {
        throw new Error('quotes are provided on the first chain only');
      },
      withdrawQuotes: async () => {},
      quotes: () => first.quotes(),
    };
  }
  // Once the marketdata role of this process has provided a feed, every role reads it through one
  // reader that follows the role's next feed after a lost and retaken lease
  // (switchable-quote-reader.ts): a role holding the stopped feed would read frozen prices.
  let reader: SwitchableQuoteReader | undefined;
  let fromStorage: Promise<QuoteReader> | undefined;
  const storageQuotes = () =>
    (fromStorage ??= (async () => {
      const cache = createQuoteCache({ db: parts.db, refreshMs: 1_000 });
      await cache.start();
      stops.add(() => cache.stop());
      return cache;
    })());
  // Once for the process: the perp-engine and perp-api roles share it, and the move of an earlier
  // release's history runs before either reads it. An open that failed is tried again at the next
  // call (a role taking its lease back starts again).
  let history: Promise<Db> | undefined;
  const perpHistoryDb = () =>
    (history ??= openHistoryDatabase(parts.config, parts.db, parts.logger).then(
      (h) => {
        if (h !== parts.db) stops.add(() => h.close());
        return h;
      },
      (err: unknown) => {
        history = undefined;
        throw err;
      },
    ));
  return {
    ...parts,
    streamBroker,
    endpoints: {},
    relaySignals: createRelaySignals(),
    firstChain: true,
    firstChainDb: parts.db,
    perpHistoryDb,
    otherChains: [],
    unstartedChains: [],
    provideQuotes(r) {
      (reader ??= createSwitchableQuoteReader()).use(r);
    },
    async withdrawQuotes(r) {
      if (reader?.current !== r) return;
      reader.use(await storageQuotes());
    },
    quotes() {
      if (reader) return Promise.resolve(reader);
      return storageQuotes();
    },
  };
}

/** A role's start: begins its work on the shared context and answers how to stop it. */
export type StartRole = (ctx: StackContext) => Promise<() => Promise<void>>;
