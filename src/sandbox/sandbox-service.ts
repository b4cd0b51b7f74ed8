/**
 * What the sandbox routes do (docs/sandbox.md): pin and release prices so that the stack shows them
 * before the answer, and set and clear faults with their effects on the chain. The funding is
 * sandbox-funding.ts. Everything the stack provides comes in as `deps`, read at each call (a role
 * that loses its lease and takes it back brings a new engine).
 */
import type { SandboxFault, SandboxFaultRequest, SandboxPrice, SandboxPricePath, SandboxPriceRequest } from '@tokex/contract';
import { toChainError, type ChainPublicClient } from '../chain/chain-client.ts';
import { AppError, ConflictError, ValidationError } from '../errors/app-error.ts';
import type { Logger } from '../lib/logger.ts';
import type { Quote, QuoteReader } from '../marketdata/market-types.ts';
import { parsePinPrice, releasePricePin, setPricePin } from '../marketdata/price-pins.ts';
import { DEFAULT_INSTRUMENTS, stepsToDecimal } from '../perp/engine/instruments.ts';
import { indexSymbolOf, midTicks } from '../perp/pricing/index-price.ts';
import type { DbExecutor } from '../storage/database.ts';
import type { FaultSpec } from './fault-registry.ts';
import type { PricePaths } from './sandbox-price-paths.ts';
import type { SandboxState } from './sandbox-state.ts';
import { venueNow } from '../lib/venue-clock.ts';

/** The perpetual engine's view the prices wait on: an instrument's tick and its index. */
export interface PerpIndexReader {
  instrument(symbol: string): { tickSize: string } | undefined;
  prices(symbol: string): { indexPriceTicks: number } | undefined;
}

export interface SandboxServiceDeps {
  state: SandboxState;
  /** The database the simulator reads its pins from (the first chain's). */
  db: DbExecutor;
  quotes: () => Promise<QuoteReader>;
  /** The perpetual engine of this process, if it runs here. */
  perpEngine: () => PerpIndexReader | undefined;
  /**
   * Whether the perp-engine role runs in this process (the all-in-one stack): a price then waits for
   * the engine too, also while it is briefly away (its lease lost and taken back, docs/operations.md).
   */
  perpExpected?: boolean;
  publicClient: ChainPublicClient;
  /** Price paths (sandbox-price-paths.ts): a pin or a release of an underlying cancels its path. */
  paths?: PricePaths;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** How long a price waits to show in the quote and the index. Default 10 s. */
  settleMs?: number;
  now?: () => number;
}

/** How long a pinned price may take to show: ten simulator ticks and ten mark intervals by default. */
export const PRICE_SETTLE_MS = 10_000;
const POLL_MS = 25;

/**
 * The underlying a request names: itself, or the underlying of a perpetual the venue lists
 * (`BTC-USD` or CCXT's `BTC/USD` → `BTC`). Anything else goes to the pin rules as sent, which say
 * what is wrong with it.
 */
function underlyingOf(input: string): string {
  const symbol = input.trim().toUpperCase().replace('/', '-');
  return DEFAULT_INSTRUMENTS.some((i) => i.symbol === symbol) ? indexSymbolOf(symbol) : input;
}

export function createSandboxService(deps: SandboxServiceDeps) {
  const { state, logger } = deps;
  const now = deps.now ?? venueNow;
  const settleMs = deps.settleMs ?? PRICE_SETTLE_MS;
  const rpc = (method: string, params: unknown[]) => deps.publicClient.request({ method: method as never, params: params as never });

  /** Polls `read` until it answers a value, for at most the settle time; `undefined` then. */
  const settle = async <T>(read: () => Promise<T | undefined> | T | undefined): Promise<T | undefined> => {
    const end = Date.now() + settleMs;
    for (;;) {
      const v = await read();
      if (v !== undefined || Date.now() >= end) return v;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  };

  const notShown = (what: string) =>
    new AppError('STORAGE_UNAVAILABLE', `prices: ${what} within ${settleMs / 1000} s (does this stack run the marketdata and perp-engine roles?); the change stands: read the quote again, or repeat the request`, { retryable: true });

  /**
   * The perpetuals indexed on `underlying` that the engine here lists, with their index now; none
   * without an engine here, undefined while the engine expected here is away.
   */
  const perpIndexes = (underlying: string) => {
    const engine = deps.perpEngine();
    if (engine === undefined) return deps.perpExpected ? undefined : [];
    return DEFAULT_INSTRUMENTS.filter((i) => indexSymbolOf(i.symbol) === underlying && engine.instrument(i.symbol) !== undefined).map((i) => {
      const tickSize = engine.instrument(i.symbol)!.tickSize;
      return { symbol: i.symbol, tickSize, indexTicks: engine.prices(i.symbol)?.indexPriceTicks ?? 0 };
    });
  };

  const quoteView = (q: Quote) => ({ bid: q.bid, ask: q.ask, last: q.last, timestamp: q.timestamp });

  async function pin(symbol: string, price: string): Promise<SandboxPrice> {
    const pinned = await setPricePin(deps.db, { symbol: underlyingOf(symbol), price, now: now() });
    const reader = await deps.quotes();
    const quote = await settle(() => {
      const q = reader.getQuote(pinned.symbol);
      return q !== undefined && q.last === pinned.price && q.timestamp >= pinned.setAt ? q : undefined;
    });
    if (quote === undefined) throw notShown(`${pinned.symbol} is pinned at ${pinned.price}, but its quote did not show it`);
    // The index is the quote's mid in whole ticks (docs/perp-pricing.md "Index"), set at the mark task's next run.
    const perp = await settle(() => {
      const q = reader.getQuote(pinned.symbol) ?? quote;
      const all = perpIndexes(pinned.symbol);
      return all?.every((p) => p.indexTicks > 0 && BigInt(p.indexTicks) === midTicks(q.bid, q.ask, p.tickSize)) ? all : undefined;
    });
    if (perp === undefined) throw notShown(`${pinned.symbol} is pinned at ${pinned.price} and quoted so, but the perpetual index did not follow`);
    logger.info({ symbol: pinned.symbol, price: pinned.price }, 'sandbox: price pinned');
    return {
      symbol: pinned.symbol,
      pinned: true,
      price: pinned.price,
      setAt: pinned.setAt,
      quote: quoteView(quote),
      perp: perp.map((p) => ({ symbol: p.symbol, indexPrice: stepsToDecimal(p.indexTicks, p.tickSize) })),
    };
  }

  async function release(symbol: string): Promise<SandboxPrice> {
    const at = now();
    const { symbol: underlying, released } = await releasePricePin(deps.db, { symbol: underlyingOf(symbol) });
    const reader = await deps.quotes();
    // The simulator's next tick after the release quotes the walk again.
    const quote = await settle(() => {
      const q = reader.getQuote(underlying);
      return q !== undefined && q.timestamp > at ? q : undefined;
    });
    if (quote === undefined) throw notShown(`${underlying} is released, but no new quote came`);
    logger.info({ symbol: underlying }, 'sandbox: price released');
    return {
      symbol: underlying,
      pinned: false,
      price: released?.price ?? null,
      released: released !== undefined,
      quote: quoteView(quote),
      perp: (perpIndexes(underlying) ?? []).filter((p) => p.indexTicks > 0).map((p) => ({ symbol: p.symbol, indexPrice: stepsToDecimal(p.indexTicks, p.tickSize) })),
    };
  }

  /** The body's fields for its kind, each required one present and none of another kind's. */
  function faultSpec(body: SandboxFaultRequest): FaultSpec {
    const fields: Record<SandboxFaultRequest['kind'], readonly string[]> = {
      'rate-limit': ['apiKey', 'count', 'retryAfterSeconds'],
      'http-503': ['path', 'count', 'cause'],
      'executor-paused': [],
      'chain-stall': [],
      'stream-drop': ['stream', 'mode'],
    };
    const allowed = fields[body.kind];
    for (const key of Object.keys(body)) {
      if (key !== 'kind' && !allowed.includes(key)) throw new ValidationError(key, `not a field of kind ${body.kind}${allowed.length > 0 ? ` (it takes ${allowed.join(', ')})` : ' (it takes none)'}`);
    }
    const required = (key: 'apiKey' | 'count' | 'path' | 'stream'): never => {
      throw new ValidationError(key, `required for kind ${body.kind}`);
    };
    switch (body.kind) {
      case 'rate-limit':
        return { kind: 'rate-limit', apiKey: body.apiKey ?? required('apiKey'), count: body.count ?? required('count'), retryAfterSeconds: body.retryAfterSeconds ?? 1 };
      case 'http-503':
        return { kind: 'http-503', path: body.path ?? required('path'), count: body.count ?? required('count'), cause: body.cause ?? 'storage' };
      case 'stream-drop':
        return { kind: 'stream-drop', stream: body.stream ?? required('stream'), mode: body.mode ?? 'close' };
      default:
        return { kind: body.kind };
    }
  }

  /** Turns anvil's automine off (`on` false) or back on, mining what waited. */
  async function automine(on: boolean): Promise<void> {
    await rpc('evm_setAutomine', [on]);
    if (on) await rpc('evm_mine', []);
  }

  return {

    async setPrice(body: SandboxPriceRequest): Promise<SandboxPrice | SandboxPricePath> {
      if (body.path !== undefined) {
        if (body.price !== undefined) throw new ValidationError('price', 'give either price or path, not both');
        if (body.release !== undefined) throw new ValidationError('release', 'give either release or path, not both');
        if (deps.paths === undefined) throw new ConflictError('prices: price paths are not served by this process');
        return deps.paths.start(underlyingOf(body.symbol), body.path);
      }
      if (body.release === true && body.price !== undefined) throw new ValidationError('price', 'give either price or release: true, not both');
      if (body.release !== true && body.price === undefined) throw new ValidationError('price', 'required: a price pins the underlying, release: true hands it back to the simulator');
      // Checked before it ends anything: a bad price leaves a path running.
      if (body.price !== undefined) parsePinPrice(body.price);
      // A pin or a release ends the underlying's path: its steps to come would undo it.
      await deps.paths?.cancel(underlyingOf(body.symbol).trim().toUpperCase());
      if (body.release === true) return release(body.symbol);
      return pin(body.symbol, body.price!);
    },

    async addFault(body: SandboxFaultRequest): Promise<SandboxFault> {
      const spec = faultSpec(body);
      if (!state.allInOne) {
        throw new ConflictError('faults: act inside one process, and this one does not run every role (the executor, the perp API or the chain may be elsewhere); use the all-in-one stack (npm start, or tokex start --role all)');
      }
      if (spec.kind === 'chain-stall' && !state.faults.has('chain-stall')) {
        try {
          await automine(false);
        } catch (cause) {
          throw new ConflictError('faults: chain-stall needs an anvil-compatible node (evm_setAutomine), and this node refused it', { cause });
        }
      }
      const fault = state.faults.add(spec);
      logger.info({ kind: fault.kind, id: fault.id, ...(fault.dropped ? { dropped: fault.dropped } : {}) }, fault.kind === 'stream-drop' ? 'sandbox: streams dropped' : 'sandbox: fault set');
      return fault;
    },

    listFaults: (): SandboxFault[] => state.faults.list(),

    async clearFaults(): Promise<SandboxFault[]> {
      // The node mines again first: a node that does not answer leaves every fault as it was.
      if (state.faults.has('chain-stall')) {
        try {
          await automine(true);
        } catch (err) {
          throw toChainError(err);
        }
      }
      const cleared = state.faults.clear();
      if (cleared.length > 0) logger.info({ kinds: cleared.map((f) => f.kind) }, 'sandbox: faults cleared');
      return cleared;
    },

    /** At the stack's stop: a stalled node is set mining again (a node of one's own outlives the stack). */
    async release(): Promise<void> {
      if (state.faults.has('chain-stall')) await automine(true).catch(() => undefined);
    },
  };
}

export type SandboxService = ReturnType<typeof createSandboxService>;
