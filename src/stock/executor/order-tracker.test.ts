import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import type { ChainPublicClient } from '../../chain/chain-client.ts';
import { openDatabase, type Db } from '../../storage/database.ts';
import { OrderStatus, type ChainOrder } from './fill-policy.ts';
import { createOrderTracker } from './order-tracker.ts';

const LENS = '0x00000000000000000000000000000000000000a1' as Address;
const ROUTER = '0x00000000000000000000000000000000000000b2' as Address;

/**
 * An RPC whose answers the test scripts: `nextOrderId`, the order statuses it returns at the
 * pinned block and each order's fee rate (`orderFeeBps`: 100 + the id). Reproduces a node
 * answering a read at the newest block from slightly older state.
 */
function scriptedRpc(state: { next: bigint; statuses: Map<bigint, number> }, feeReads: bigint[][] = []): ChainPublicClient {
  const order = (status: number) => ({ status, filledQuantity: 0n }) as unknown as ChainOrder;
  return {
    getBlockNumber: async () => 10n,
    readContract: async (args: { functionName: string; args?: readonly unknown[] }) => {
      if (args.functionName === 'nextOrderId') return state.next;
      const ids = args.args![0] as bigint[];
      if (args.functionName === 'orderFeeBps') {
        feeReads.push([...ids]);
        return ids.map((id) => 100 + Number(id));
      }
      return ids.map((id) => order(state.statuses.get(id) ?? OrderStatus.None));
    },
  } as unknown as ChainPublicClient;
}

describe('order tracker', () => {
  let db: Db;
  beforeEach(async () => {
    db = await openDatabase({ sqlitePath: ':memory:' });
  });
  afterEach(async () => {
    await db.close();
  });

  it('re-reads an id that reads as empty below nextOrderId instead of taking it for final', async () => {
    const state = { next: 3n, statuses: new Map<bigint, number>([[2n, OrderStatus.Open]]) };
    const feeReads: bigint[][] = [];
    const tracker = createOrderTracker({ db, publicClient: scriptedRpc(state, feeReads), accountLens: LENS, stockRouter: ROUTER });

    const first = await tracker.refresh();
    expect(first.open.map((t) => t.id)).toEqual([2n]);
    expect(first.open.map((t) => t.feeBps)).toEqual([102n]);
    // Order 1 exists (nextOrderId says so) but read empty: the mark must not pass it.
    expect(tracker.lowWaterMark()).toBe(1n);

    state.statuses.set(1n, OrderStatus.Open);
    const second = await tracker.refresh();
    expect(second.open.map((t) => t.id)).toEqual([1n, 2n]);
    // Each live order's rate (fixed at placement) is read once.
    expect(second.open.map((t) => t.feeBps)).toEqual([101n, 102n]);
    expect(feeReads).toEqual([[2n], [1n]]);

    state.statuses.set(1n, OrderStatus.Filled);
    state.statuses.set(2n, OrderStatus.Filled);
    const third = await tracker.refresh();
    expect(third.open).toEqual([]);
    expect(tracker.lowWaterMark()).toBe(3n);
  });

  it('persists the low-water mark so a new tracker resumes there', async () => {
    const state = { next: 4n, statuses: new Map<bigint, number>([[1n, OrderStatus.Filled], [2n, OrderStatus.Open], [3n, OrderStatus.Canceled]]) };
    const first = createOrderTracker({ db, publicClient: scriptedRpc(state), accountLens: LENS, stockRouter: ROUTER });
    await first.refresh();
    expect(first.lowWaterMark()).toBe(2n);

    const reads: bigint[][] = [];
    const rpc = scriptedRpc(state);
    const readContract = rpc.readContract.bind(rpc);
    (rpc as { readContract: unknown }).readContract = async (args: { functionName: string; args?: readonly unknown[] }) => {
      if (args.functionName === 'getOrders') reads.push([...(args.args![0] as bigint[])]);
      return readContract(args as never);
    };
    const second = createOrderTracker({ db, publicClient: rpc, accountLens: LENS, stockRouter: ROUTER });
    const r = await second.refresh();
    expect(reads).toEqual([[2n, 3n]]);
    expect(r.open.map((t) => t.id)).toEqual([2n]);
  });
});
