/**
 * Finds the orders the executor has to look at, from the chain alone (no indexer): every id from a
 * persisted low-water mark — the lowest id that was not final when last seen — up to
 * `StockRouter.nextOrderId() - 1`, read with `AccountLens.getOrders` in chunks at one block.
 *
 * Open (and canceling) orders are kept in memory and re-read every refresh; ids below the mark are
 * final forever (a final status never changes), so after a restart the scan resumes at the mark and
 * never re-reads history. Losing the process loses nothing: the chain is the record.
 */
import type { Address } from 'viem';
import { accountLensAbi, stockRouterAbi } from '../../chain/abi/generated/index.ts';
import { toChainError, type ChainPublicClient } from '../../chain/chain-client.ts';
import { ChainRevertError } from '../../errors/app-error.ts';
import type { DbExecutor } from '../../storage/database.ts';
import { getMeta, setMeta } from '../../storage/meta-store.ts';
import { OrderStatus, type ChainOrder } from './fill-policy.ts';
import type { ExecutorLogger } from './executor-logger.ts';

export interface TrackedOrder {
  id: bigint;
  order: ChainOrder;
  /** The block the order was read at. */
  readAtBlock: bigint;
  /**
   * The fee rate (bps) the router charges this order, fixed at its placement
   * (`StockRouter.orderFeeBps`); undefined when the router cannot say (one from before 0.2.0).
   */
  feeBps?: bigint;
}

export interface OrderTrackerOptions {
  db: DbExecutor;
  publicClient: ChainPublicClient;
  accountLens: Address;
  stockRouter: Address;
  /** First block worth searching for fill events (the deployment block). Default 0. */
  fromBlock?: bigint;
  logger?: ExecutorLogger;
  /** Ids per getOrders call. Default 500. */
  chunkSize?: number;
  /** getOrders calls at once. Default 4. */
  concurrency?: number;
  /** meta key of the low-water mark. Default `executor.orders.lowWaterMark`. */
  metaKey?: string;
}

export interface RefreshResult {
  open: TrackedOrder[];
  blockNumber: bigint;
  nextOrderId: bigint;
  /** Orders read this refresh. */
  read: number;
}

export interface OrderTracker {
  /** Reads the chain: new ids since the last refresh and every order still open. */
  refresh(): Promise<RefreshResult>;
  /** Orders this process closed on chain (mined): final, so the mark may pass them now. */
  markClosed(ids: readonly bigint[]): Promise<void>;
  /** Lowest id not known to be final (persisted). */
  lowWaterMark(): bigint;
  openCount(): number;
  /**
   * Exact Σ quantity·price of an order's fills, summed from its `OrderFilled` events; cached per
   * filled quantity. Undefined when the events cannot be read (the policy then stays conservative).
   */
  filledValue(t: TrackedOrder): Promise<bigint | undefined>;
}

export const LOW_WATER_META_KEY = 'executor.orders.lowWaterMark';

const isLive = (status: number): boolean => status === OrderStatus.Open || status === OrderStatus.Canceling;

export function createOrderTracker(opts: OrderTrackerOptions): OrderTracker {
  const chunkSize = opts.chunkSize ?? 500;
  const concurrency = opts.concurrency ?? 4;
  const metaKey = opts.metaKey ?? LOW_WATER_META_KEY;
  const { publicClient } = opts;

  let loaded = false;
  let lowWater = 1n;
  let persistedLowWater = 1n;
  /** Every id below this has been read at least once by this process. */
  let scannedTo = 1n;
  const open = new Map<bigint, TrackedOrder>();
  /**
   * Ids below nextOrderId that read as empty (status None). A consistent read never shows that, but
   * an RPC can answer a read pinned to the newest block from state a moment older (anvil does under
   * load); such an id is read again next refresh instead of being taken for final.
   */
  const unseen = new Set<bigint>();
  const filledValues = new Map<bigint, { filledQuantity: bigint; value: bigint }>();
  /** Fee rates of live orders: fixed at placement, so read once per order. */
  const feeRates = new Map<bigint, bigint>();
  let feeRatesUnsupported = false;

  /** Reads the fee rates of `ids` not known yet; a router without `orderFeeBps` leaves them unknown. */
  const readFeeRates = async (ids: bigint[], blockNumber: bigint): Promise<void> => {
    const missing = ids.filter((id) => !feeRates.has(id));
    if (missing.length === 0 || feeRatesUnsupported) return;
    for (let i = 0; i < missing.length; i += chunkSize) {
      const chunk = missing.slice(i, i + chunkSize);
      let rates: readonly number[];
      try {
        rates = await publicClient.readContract({ address: opts.stockRouter, abi: stockRouterAbi, functionName: 'orderFeeBps', args: [chunk], blockNumber });
      } catch (err) {
        const mapped = toChainError(err);
        if (!(mapped instanceof ChainRevertError)) throw mapped;
        feeRatesUnsupported = true;
        opts.logger?.warn({ err: mapped }, 'executor: the StockRouter has no per-order fee rates; the current fee config is used');
        return;
      }
      chunk.forEach((id, k) => feeRates.set(id, BigInt(rates[k])));
    }
  };

  const load = async (): Promise<void> => {
    const raw = await getMeta(opts.db, metaKey);
    if (raw !== undefined && /^[1-9]\d*$/.test(raw)) lowWater = BigInt(raw);
    persistedLowWater = lowWater;
    scannedTo = lowWater;
    loaded = true;
  };

  const readChunk = async (ids: bigint[], blockNumber: bigint): Promise<readonly ChainOrder[]> => {
    try {
      return (await publicClient.readContract({
        address: opts.accountLens,
        abi: accountLensAbi,
        functionName: 'getOrders',
        args: [ids],
        blockNumber,
      })) as readonly ChainOrder[];
    } catch (err) {
      throw toChainError(err);
    }
  };

  const advanceLowWater = async (): Promise<void> => {
    let lowest = scannedTo;
    for (const id of open.keys()) if (id < lowest) lowest = id;
    for (const id of unseen) if (id < lowest) lowest = id;
    lowWater = lowest;
    if (lowWater === persistedLowWater) return;
    try {
      await setMeta(opts.db, metaKey, lowWater.toString());
      persistedLowWater = lowWater;
    } catch (err) {
      // The chain stays the record; a stale mark only means a longer scan after a restart.
      opts.logger?.warn({ err }, 'executor: could not persist the order low-water mark; retrying next tick');
    }
  };

  const refresh = async (): Promise<RefreshResult> => {
    if (!loaded) await load();
    let blockNumber: bigint;
    let next: bigint;
    try {
      blockNumber = await publicClient.getBlockNumber({ cacheTime: 0 });
      next = await publicClient.readContract({ address: opts.stockRouter, abi: stockRouterAbi, functionName: 'nextOrderId', blockNumber });
    } catch (err) {
      throw toChainError(err);
    }

    const ids: bigint[] = [...open.keys(), ...unseen];
    for (let id = scannedTo; id < next; id++) ids.push(id);
    const chunks: bigint[][] = [];
    for (let i = 0; i < ids.length; i += chunkSize) chunks.push(ids.slice(i, i + chunkSize));
    const results: (readonly ChainOrder[])[] = new Array(chunks.length);
    let cursor = 0;
    const worker = async (): Promise<void> => {
      for (let i = cursor++; i < chunks.length; i = cursor++) results[i] = await readChunk(chunks[i], blockNumber);
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, chunks.length) }, worker));

    // Only now, with every chunk read, does the in-memory view move.
    chunks.forEach((chunk, c) => {
      chunk.forEach((id, i) => {
        const order = results[c][i];
        if (order.status === OrderStatus.None) {
          unseen.add(id);
          open.delete(id);
        } else if (isLive(order.status)) {
          unseen.delete(id);
          open.set(id, { id, order, readAtBlock: blockNumber });
        } else {
          unseen.delete(id);
          open.delete(id);
          filledValues.delete(id);
          feeRates.delete(id);
        }
      });
    });
    if (next > scannedTo) scannedTo = next;
    await readFeeRates([...open.keys()], blockNumber);
    for (const t of open.values()) t.feeBps = feeRates.get(t.id);

    await advanceLowWater();
    const list = [...open.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { open: list, blockNumber, nextOrderId: next, read: ids.length };
  };

  const filledValue = async (t: TrackedOrder): Promise<bigint | undefined> => {
    if (t.order.filledQuantity === 0n) return 0n;
    const cached = filledValues.get(t.id);
    if (cached && cached.filledQuantity === t.order.filledQuantity) return cached.value;
    try {
      const logs = await publicClient.getContractEvents({
        address: opts.stockRouter,
        abi: stockRouterAbi,
        eventName: 'OrderFilled',
        args: { orderId: t.id },
        fromBlock: opts.fromBlock ?? 0n,
        toBlock: t.readAtBlock,
      });
      let value = 0n;
      let quantity = 0n;
      for (const l of logs) {
        // quantity × price is the same value in any multiplier; the quantity is restated in the
        // order's current one (a split since the fill), as the router restated the order.
        value += l.args.quantity! * l.args.price!;
        quantity += (l.args.quantity! * t.order.multiplier) / l.args.multiplier!;
      }
      // Events and the order read must describe the same fills.
      if (quantity !== t.order.filledQuantity) return undefined;
      filledValues.set(t.id, { filledQuantity: quantity, value });
      return value;
    } catch (err) {
      opts.logger?.warn({ err: toChainError(err), orderId: t.id.toString() }, 'executor: could not read fill events; using the conservative bound');
      return undefined;
    }
  };

  return {
    refresh,
    async markClosed(ids) {
      if (ids.length === 0) return;
      for (const id of ids) {
        open.delete(id);
        filledValues.delete(id);
        feeRates.delete(id);
      }
      await advanceLowWater();
    },
    lowWaterMark: () => lowWater,
    openCount: () => open.size,
    filledValue,
  };
}
