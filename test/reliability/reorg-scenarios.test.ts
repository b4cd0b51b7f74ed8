/**
 * Reorg fault test: random scenarios on a real anvil with the stock and perp venues, each indexed
 * by the stock and perp indexers (real SQLite) following the chain `c` blocks behind its head
 * (c in 0..3), through a reorg of depth d in 1..10 made with `anvil_reorg` (same height, other
 * transactions) or `anvil_rollback` followed by a new branch (shorter, as long or longer). After
 * each scenario:
 * - the indexed state (events, orders, fills, cash and stock operations, positions, perp collateral
 *   movements, checkpoints) equals what brand-new indexers compute on a fresh database by a full
 *   rescan of the same chain;
 * - the stored events are exactly the chain's logs up to head - c, and nothing of a later block is
 *   credited (checked after every sync; in loop mode after every transaction, and the catch-up
 *   fails at once on a checkpoint past head - c); the indexer rolled back whenever the block it had
 *   checkpointed left the chain, and never when d <= c (it had not indexed the replaced blocks).
 * A third of the scenarios drive the indexers with `syncOnce`, a third push them the block at
 * head - c with `deliverBlock` (a newHeads subscriber's path; the exact checks after each), and a
 * third run their polling loops beside the transactions (the reorg lands while they poll).
 *
 * `npm test` runs a short variant (30 scenarios, 3 a depth); REORG_SCENARIOS=500 the full one (a new anvil
 * every REORG_CHAIN_SCENARIOS=25), REORG_SEED=<n> another seed, REORG_ONLY=<i> a single scenario
 * (its parameters are in every failure message). Each scenario starts from the same chain snapshot
 * with new databases, so scenarios are independent.
 */
import type { Hex } from 'viem';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { PerpDeployment } from '../../src/chain/deploy-perp-venue.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { createPerpIndexer, type PerpIndexer } from '../../src/perp/indexer/perp-indexer.ts';
import type { StockIndexer } from '../../src/stock/indexer/stock-indexer.ts';
import { getCheckpoint } from '../../src/storage/chain-block-store.ts';
import { getMeta } from '../../src/storage/meta-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { newIndexer } from '../indexer/indexer-test-helpers.ts';
import { startChainFixture, type ChainFixture } from '../support/chain-fixture.ts';
import { deployPerpVenue } from '../support/perp-venue.ts';
import { openTestSqlite } from '../support/test-databases.ts';
import {
  act,
  ACTION_WEIGHTS,
  followedAddresses,
  highestIndexedBlock,
  indexedState,
  INDEXERS,
  prepareWallets,
  orderDeadline,
  reorgTxs,
  Rng,
  venueOf,
  type ScenarioMemory,
  type Venue,
} from './reorg-scenario-helpers.ts';

const SCENARIOS = Number(process.env.REORG_SCENARIOS ?? 30);
const SEED = Number(process.env.REORG_SEED ?? 20_261_123);
const ONLY = process.env.REORG_ONLY === undefined ? undefined : Number(process.env.REORG_ONLY);
const MAX_DEPTH = 10;

let f: ChainFixture;
let perp: PerpDeployment;
let v: Venue;
let baseHead: bigint;
let marginVault: string;
const startBlocks: Record<(typeof INDEXERS)[number], number> = { stock: -1, perp: -1 };

/** The head now (viem caches eth_blockNumber for a polling interval otherwise). */
const headNow = () => f.publicClient.getBlockNumber({ cacheTime: 0 });

/**
 * Scenarios per chain: the full variant starts a new anvil every so often. After some thousands of
 * blocks mined and reverted, anvil stops serving the state of older blocks (eth_call / eth_getCode
 * at them fail), which the indexers need for positions and their start block.
 */
const CHAIN_SCENARIOS = Number(process.env.REORG_CHAIN_SCENARIOS ?? 25);
/** Blocks mined on the current anvil, reverted ones included. */
let minedOnChain = 0;

async function startChain(): Promise<void> {
  f = await startChainFixture({ symbols: DEMO_SYMBOLS.slice(0, 2) });
  perp = await deployPerpVenue(f);
  v = venueOf(f, perp);
  await prepareWallets(v);
  baseHead = await headNow();
  marginVault = perp.contracts.marginVault.toLowerCase();
  // The start blocks the indexers find on their own (the first block with code of a followed
  // contract), found once while the node still serves the state of the set-up blocks; every indexer
  // of the scenarios is given them. (Left to find them later, an indexer whose eth_getCode probe of
  // an old block fails starts at the deployment's last block instead and misses the set-up's events.)
  startBlocks.stock = startBlocks.perp = -1;
  const probe = await openTestSqlite();
  try {
    await syncBoth(indexersOn(probe, 0));
    for (const name of INDEXERS) startBlocks[name] = Number(await getMeta(probe, `indexer.${name}.start-block`));
  } finally {
    await probe.close();
  }
  expect(startBlocks.stock).toBeGreaterThan(0);
  expect(startBlocks.perp).toBeGreaterThan(startBlocks.stock);
  minedOnChain = Number(baseHead);
}

beforeAll(startChain);
afterAll(async () => {
  await f?.stop();
});

interface Figures {
  scenarios: number;
  /** Anvil instances used. */
  chains: number;
  depths: Map<number, number>;
  kinds: Record<'anvil_reorg' | 'anvil_rollback', number>;
  modes: Record<Mode, number>;
  /** What `deliverBlock` answered in push mode. */
  deliveries: Map<string, number>;
  confirmations: Map<number, number>;
  blocksReorged: number;
  /** Scenarios where the indexer had indexed some of the replaced blocks (a rollback was required). */
  rollbacksRequired: number;
  eventsCompared: number;
  rowsCompared: Map<string, number>;
  /** Transactions anvil_reorg mined into the replacement blocks. */
  replacementTxs: number;
  exactChecks: number;
  unconfirmedChecked: number;
  actions: number;
  /** Actions the branch refused in simulation (nothing mined). */
  refused: Map<string, number>;
  maxLagMs: number;
  maxLagBlocks: number;
}

interface Live {
  db: Db;
  stock: StockIndexer;
  perp: PerpIndexer;
  rollbacks: number;
}

function indexersOn(db: Db, c: number, onRollback?: () => void): { stock: StockIndexer; perp: PerpIndexer } {
  return {
    stock: newIndexer(f, db, { confirmations: c, pollMs: 10, startBlock: startBlocks.stock >= 0 ? startBlocks.stock : undefined, onCommitted: (ch) => ch.rolledBack && onRollback?.() }),
    perp: createPerpIndexer({ db, publicClient: f.publicClient, deployment: perp, confirmations: c, pollMs: 10, startBlock: startBlocks.perp >= 0 ? startBlocks.perp : undefined }),
  };
}

async function syncBoth(l: { stock: StockIndexer; perp: PerpIndexer }): Promise<void> {
  await l.stock.syncOnce();
  await l.perp.syncOnce();
}

/** The indexer each followed address belongs to. */
function indexerOf(address: string): string {
  return address.toLowerCase() === marginVault ? 'perp' : 'stock';
}

/**
 * Exact checks at a quiet head (nothing mined meanwhile), the indexers caught up: the stored
 * events are exactly the canonical logs up to head - c, both checkpoints name block head - c of
 * the canonical chain, and nothing of a block above it was credited. Returns the events checked.
 */
async function expectExactlyConfirmed(db: Db, c: number, fig: Figures, where: string): Promise<number> {
  const head = await headNow();
  const target = head - BigInt(c);
  const logs = await f.publicClient.getLogs({ address: followedAddresses(v), fromBlock: 0n, toBlock: head });
  const key = (indexer: string, n: bigint | number, hash: string, i: number) => `${indexer}:${n}:${hash.toLowerCase()}:${i}`;
  const expected = logs.filter((l) => (l.blockNumber as bigint) <= target).map((l) => key(indexerOf(l.address), l.blockNumber as bigint, l.blockHash as Hex, Number(l.logIndex))).sort();
  const stored = (await db.kysely.selectFrom('chain_events').select(['indexer', 'block_number', 'block_hash', 'log_index']).execute())
    .map((r) => key(r.indexer, r.block_number, r.block_hash, Number(r.log_index)))
    .sort();
  if (JSON.stringify(stored) !== JSON.stringify(expected)) {
    // Say which side of the chain the extra events are on: a block above head - c (too early) or an orphaned one (a missed rollback).
    const want = new Set(expected);
    const extra = await Promise.all(
      stored
        .filter((k) => !want.has(k))
        .map(async (k) => {
          const [, n, hash] = k.split(':');
          const b = await f.publicClient.getBlock({ blockNumber: BigInt(n) }).catch(() => undefined);
          return `${k} ${b?.hash.toLowerCase() === hash ? 'canonical' : 'orphaned'}`;
        }),
    );
    const checkpoints = await Promise.all(INDEXERS.map((n) => getCheckpoint(db, n)));
    expect(stored, `${where}: stored events = canonical logs up to head ${head} - ${c}; extra: ${extra.join(', ')}; checkpoints ${JSON.stringify(checkpoints)}`).toEqual(expected);
  }
  const canonical = await f.publicClient.getBlock({ blockNumber: target });
  for (const name of INDEXERS) {
    expect(await getCheckpoint(db, name), `${where}: ${name} checkpoint`).toEqual({ number: Number(target), hash: canonical.hash.toLowerCase() });
  }
  // Nothing credited before its confirmations: the movements of the last c blocks are not there.
  const unconfirmed = [...new Set(logs.filter((l) => (l.blockNumber as bigint) > target).map((l) => (l.transactionHash as Hex).toLowerCase()))];
  if (unconfirmed.length > 0) {
    const k = db.kysely;
    const credited = [
      ...(await k.selectFrom('stock_cash_operations').select('operation_id').where((eb) => eb.or([eb('tx_hash', 'in', unconfirmed), eb('settle_tx_hash', 'in', unconfirmed)])).execute()),
      ...(await k.selectFrom('stock_operations').select('operation_id').where('tx_hash', 'in', unconfirmed).execute()),
      ...(await k.selectFrom('stock_orders').select('order_id').where((eb) => eb.or([eb('place_tx_hash', 'in', unconfirmed), eb('cancel_tx_hash', 'in', unconfirmed), eb('close_tx_hash', 'in', unconfirmed)])).execute()),
      ...(await k.selectFrom('stock_order_fills').select('order_id').where('tx_hash', 'in', unconfirmed).execute()),
      ...(await k.selectFrom('perp_collateral_events').select('event_id').where('tx_hash', 'in', unconfirmed).execute()),
    ];
    expect(credited, `${where}: rows from the ${c} unconfirmed blocks`).toEqual([]);
    fig.unconfirmedChecked += unconfirmed.length;
  }
  fig.exactChecks++;
  return stored.length;
}

/** Stored blocks are all canonical: no orphaned block is left behind a rollback. */
async function expectStoredBlocksCanonical(db: Db, where: string): Promise<void> {
  const rows = await db.kysely.selectFrom('chain_blocks').select(['indexer', 'number', 'hash']).where('number', '>', Number(baseHead)).execute();
  const numbers = [...new Set(rows.map((r) => r.number))];
  const hashes = new Map(await Promise.all(numbers.map(async (n) => [n, (await f.publicClient.getBlock({ blockNumber: BigInt(n) }).catch(() => undefined))?.hash.toLowerCase()] as const)));
  const orphaned = rows.filter((r) => hashes.get(r.number) !== r.hash);
  expect(orphaned, `${where}: stored blocks not on the chain`).toEqual([]);
}

/** Polls (no fixed sleep) until both running indexers checkpoint block head - c of the canonical chain; returns the ms it took. */
async function caughtUp(db: Db, c: number, where: string, timeoutMs = 20_000): Promise<number> {
  const started = performance.now();
  const head = await headNow();
  const target = await f.publicClient.getBlock({ blockNumber: head - BigInt(c) });
  const want = { number: Number(target.number), hash: target.hash.toLowerCase() };
  for (;;) {
    const cps = await Promise.all(INDEXERS.map((n) => getCheckpoint(db, n)));
    if (cps.every((cp) => cp?.number === want.number && cp.hash === want.hash)) return performance.now() - started;
    // Past head - c on the canonical chain: indexed before its confirmations (fail now, not at the timeout).
    for (const cp of cps) {
      if (cp && cp.number > want.number && (await f.publicClient.getBlock({ blockNumber: BigInt(cp.number) }).catch(() => undefined))?.hash.toLowerCase() === cp.hash) {
        throw new Error(`${where}: checkpoint ${cp.number} is past head ${head} - ${c}`);
      }
    }
    if (performance.now() - started > timeoutMs) throw new Error(`${where}: indexers at ${JSON.stringify(cps)}, not ${JSON.stringify(want)} within ${timeoutMs} ms`);
    await new Promise((r) => setImmediate(r));
  }
}

type Mode = 'step' | 'push' | 'loop';
const MODES: readonly Mode[] = ['step', 'push', 'loop'];

/**
 * anvil itself, after some hundreds of blocks mined and reverted on one instance, has been seen to
 * come out of `anvil_rollback` without the contracts' state: say so instead of blaming the indexer.
 */
async function expectAnvilState(where: string): Promise<void> {
  for (const address of [f.deployment.contracts.stockRouter, perp.contracts.marginVault]) {
    const code = await f.publicClient.getCode({ address });
    expect(code?.length ?? 0, `${where}: anvil lost the state of ${address} in anvil_rollback (an anvil fault, not the indexer's; about ${minedOnChain} blocks mined on this anvil)`).toBeGreaterThan(2);
  }
}

async function runScenario(i: number, fig: Figures): Promise<void> {
  const rng = new Rng((SEED * 7919 + i * 104_729) >>> 0);
  const d = 1 + (i % MAX_DEPTH);
  const c = rng.int(0, 3);
  const mode = rng.pick(MODES);
  const kind = rng.chance(0.5) ? ('anvil_reorg' as const) : ('anvil_rollback' as const);
  const where = `scenario ${i} (seed ${SEED}, depth ${d}, confirmations ${c}, ${mode}, ${kind})`;
  const mem: ScenarioMemory = { orderIds: [], depositQueueIds: [], withdrawalQueueIds: [] };
  const snap = await f.snapshot();
  const db = await openTestSqlite();
  const live: Live = { db, ...indexersOn(db, c, () => live.rollbacks++), rollbacks: 0 };
  const fresh = await openTestSqlite();
  /**
   * After `anvil_rollback` the chain is shorter for a while: blocks the indexer checkpointed with
   * their confirmations on the old branch may still be there (below the fork point, or re-mined with
   * the same hash: empty blocks of the same second hash alike) with fewer confirmations now, and
   * stay indexed. The exact checks (which expect the checkpoint at head - c) therefore wait until
   * the chain is back at its former height. (A real reorg does not shorten the chain like this.)
   */
  let highWater = -1;
  const settledHead = async () => Number(await headNow()) >= highWater;
  try {
    if (mode === 'loop') {
      await live.stock.start();
      await live.perp.start();
    }
    /**
     * Brings the indexers to head - c without their loops: `syncOnce`, or (push) the block at
     * head - c delivered as a newHeads subscriber of confirmed blocks would.
     */
    const drive = async () => {
      if (mode === 'step') return syncBoth(live);
      const target = Number(await headNow()) - c;
      if (target < 0) return;
      const { hash } = await f.publicClient.getBlock({ blockNumber: BigInt(target) });
      for (const ix of [live.stock, live.perp]) {
        const answer = await ix.deliverBlock(hash);
        expect(['appended', 'duplicate', 'gap-filled', 'reorged'], `${where}: delivery of block ${target}`).toContain(answer);
        fig.deliveries.set(answer, (fig.deliveries.get(answer) ?? 0) + 1);
      }
    };
    /** One random action, then the checks the mode allows at that point. */
    const step = async (checkPremature: boolean) => {
      const action = rng.weighted(ACTION_WEIGHTS);
      const mined = await act(v, rng, mem, action);
      fig.actions++;
      if (mined === 0) fig.refused.set(action, (fig.refused.get(action) ?? 0) + 1);
      if (mode !== 'loop') {
        if (rng.chance(0.5)) {
          await drive();
          if (await settledHead()) await expectExactlyConfirmed(db, c, fig, where);
        }
      } else if (checkPremature && mined > 0) {
        // Head read first, nothing mined after it: an indexed block above head - c was indexed early.
        const head = Number(await headNow());
        expect(await highestIndexedBlock(db), `${where}: indexed ahead of its confirmations`).toBeLessThanOrEqual(head - c);
      }
    };

    // Before the reorg: activity, then (usually) the indexers caught up, so the reorg hits blocks they hold.
    for (let n = rng.int(3, 9); n > 0; n--) await step(true);
    const head0 = await headNow();
    // The fork point stays above the set-up blocks.
    const pad = Number(baseHead) + d + 1 - Number(head0);
    if (pad > 0) await f.testClient.mine({ blocks: pad });
    const head = await headNow();
    const waitBefore = rng.chance(0.8);
    if (waitBefore) {
      if (mode !== 'loop') await drive();
      else await caughtUp(db, c, `${where} before the reorg`);
    }
    const cpBefore = waitBefore ? await getCheckpoint(db, 'stock') : undefined;
    if (mode !== 'loop' && waitBefore) await expectExactlyConfirmed(db, c, fig, `${where} before the reorg`);

    // The reorg.
    if (kind === 'anvil_reorg') {
      const txs = reorgTxs(v, rng, d, rng.int(0, 3), await orderDeadline(v));
      await f.testClient.request({ method: 'anvil_reorg', params: [d, txs] } as never);
      expect(await headNow()).toBe(head);
      const replaced = await Promise.all([...Array(d).keys()].map((k) => f.publicClient.getBlock({ blockNumber: head - BigInt(k) })));
      expect(replaced.reduce((n, b) => n + b.transactions.length, 0), `${where}: replacement transactions mined`).toBe(txs.length);
      fig.replacementTxs += txs.length;
    } else {
      await f.testClient.request({ method: 'anvil_rollback', params: [d] } as never);
      expect(await headNow()).toBe(head - BigInt(d));
      await expectAnvilState(where);
      highWater = Number(head);
      // The new branch: shorter, as long or longer than the orphaned one.
      for (let n = rng.int(0, d + 2); n > 0; n--) await step(false);
    }
    fig.blocksReorged += d;

    // After it: more activity, then the indexers catch up.
    for (let n = rng.int(0, 4); n > 0; n--) await step(false);
    const short = highWater - Number(await headNow());
    if (short > 0) await f.testClient.mine({ blocks: short });
    let lag = 0;
    if (mode === 'push' && cpBefore) {
      // A block of the abandoned branch, pushed late (a subscription's backlog): never indexed.
      const gone = (await f.publicClient.getBlock({ blockNumber: BigInt(cpBefore.number) }).catch(() => undefined))?.hash.toLowerCase() !== cpBefore.hash;
      if (gone) {
        const answer = await live.stock.deliverBlock(cpBefore.hash);
        expect(['stale', 'unconfirmed'], `${where}: delivery of an orphaned block`).toContain(answer);
        fig.deliveries.set(`orphan-${answer}`, (fig.deliveries.get(`orphan-${answer}`) ?? 0) + 1);
      }
    }
    if (mode !== 'loop') await drive();
    else {
      const cps = await Promise.all(INDEXERS.map(async (n) => (await getCheckpoint(db, n))?.number));
      // Blocks still to index when the last one was mined (not counted before a first checkpoint).
      const behind = cps.every((n) => n !== undefined) ? Number(await headNow()) - c - Math.min(...(cps as number[])) : 0;
      lag = await caughtUp(db, c, `${where} after the reorg`);
      await live.stock.stop();
      await live.perp.stop();
      fig.maxLagMs = Math.max(fig.maxLagMs, lag);
      fig.maxLagBlocks = Math.max(fig.maxLagBlocks, behind);
    }
    await expectExactlyConfirmed(db, c, fig, `${where} after the reorg`);
    await expectStoredBlocksCanonical(db, where);

    // Never rolled back when the reorg stayed within the unconfirmed blocks (the indexer had not
    // indexed any of them).
    if (d <= c) expect(live.rollbacks, `${where}: rollbacks`).toBe(0);
    if (cpBefore) {
      const still = (await f.publicClient.getBlock({ blockNumber: BigInt(cpBefore.number) }).catch(() => undefined))?.hash.toLowerCase() === cpBefore.hash;
      if (!still) fig.rollbacksRequired++;
      // A checkpointed block that left the chain must be rolled back. One still there afterwards was
      // either never replaced (anvil_reorg: same height, so nothing to undo) or re-mined with the
      // same hash after anvil_rollback had removed it for a while (empty blocks of the same second
      // hash alike), when the indexer may have synced in between and rightly rolled back.
      if (!still) expect(live.rollbacks, `${where}: rollbacks (checkpoint ${cpBefore.number} left the chain)`).toBeGreaterThan(0);
      else if (kind === 'anvil_reorg') expect(live.rollbacks, `${where}: rollbacks (checkpoint ${cpBefore.number} still canonical)`).toBe(0);
    }

    // A brand-new indexer on a fresh database, by a full rescan of the same chain.
    await syncBoth(indexersOn(fresh, c));
    const [got, want] = await Promise.all([indexedState(db), indexedState(fresh)]);
    for (const table of Object.keys(want)) {
      expect(got[table], `${where}: ${table} differs from a fresh rescan`).toEqual(want[table]);
      fig.rowsCompared.set(table, (fig.rowsCompared.get(table) ?? 0) + want[table].length);
    }
    fig.eventsCompared += want.chain_events.length;

    fig.scenarios++;
    fig.depths.set(d, (fig.depths.get(d) ?? 0) + 1);
    fig.kinds[kind]++;
    fig.modes[mode]++;
    fig.confirmations.set(c, (fig.confirmations.get(c) ?? 0) + 1);
  } catch (err) {
    // Errors from the indexers themselves (not our assertions) get the scenario's parameters too.
    if (err instanceof Error && err.message.startsWith('scenario ')) throw err;
    const e = err as { message?: string; code?: string; detail?: unknown; cause?: { message?: string } };
    const cause = e.cause?.message ? `; cause: ${e.cause.message.split('\n').slice(0, 3).join(' | ')}` : '';
    throw new Error(`${where}, about ${minedOnChain} blocks mined on this anvil: ${e.code ?? ''} ${e.message} ${JSON.stringify(e.detail ?? {})}${cause}`, { cause: err });
  } finally {
    minedOnChain += Math.max(0, Number(await headNow()) - Number(baseHead));
    await live.stock.stop();
    await live.perp.stop();
    await db.close();
    await fresh.close();
    await f.revert(snap);
  }
}

test(
  `${ONLY === undefined ? SCENARIOS : 1} random reorg scenarios (depth 1-${MAX_DEPTH}): indexed state = a fresh rescan, nothing credited before its confirmations`,
  async () => {
    const fig: Figures = {
      scenarios: 0,
      chains: 1,
      depths: new Map(),
      kinds: { anvil_reorg: 0, anvil_rollback: 0 },
      modes: { step: 0, push: 0, loop: 0 },
      deliveries: new Map(),
      confirmations: new Map(),
      blocksReorged: 0,
      rollbacksRequired: 0,
      eventsCompared: 0,
      rowsCompared: new Map(),
      replacementTxs: 0,
      exactChecks: 0,
      unconfirmedChecked: 0,
      actions: 0,
      refused: new Map(),
      maxLagMs: 0,
      maxLagBlocks: 0,
    };
    const started = performance.now();
    const indices = ONLY === undefined ? [...Array(SCENARIOS).keys()] : [ONLY];
    for (const [k, i] of indices.entries()) {
      if (k > 0 && k % CHAIN_SCENARIOS === 0) {
        await f.stop();
        await startChain();
        fig.chains++;
      }
      await runScenario(i, fig);
    }
    const sorted = (m: Map<number, number>) => [...m.entries()].sort((a, b) => a[0] - b[0]).map(([k, n]) => `${k}:${n}`).join(' ');
    console.log(
      [
        `reorg scenarios: ${fig.scenarios} run in ${((performance.now() - started) / 1000).toFixed(1)} s on ${fig.chains} anvil chain(s) (seed ${SEED})`,
        `  depths covered (depth:scenarios): ${sorted(fig.depths)}`,
        `  reorgs: anvil_reorg ${fig.kinds.anvil_reorg}, anvil_rollback + new branch ${fig.kinds.anvil_rollback}; blocks reorged ${fig.blocksReorged}; replacement txs ${fig.replacementTxs}; rollbacks required ${fig.rollbacksRequired}`,
        `  confirmations (c:scenarios): ${sorted(fig.confirmations)}; driven by syncOnce ${fig.modes.step}, by pushed blocks (deliverBlock) ${fig.modes.push}, by the polling loop ${fig.modes.loop}`,
        `  deliverBlock answers: ${[...fig.deliveries.entries()].sort().map(([k, n]) => `${k} ${n}`).join(', ')}`,
        `  actions ${fig.actions} (refused by the branch in simulation, not sent: ${[...fig.refused.entries()].sort().map(([k, n]) => `${k} ${n}`).join(', ')}); events compared with a fresh rescan ${fig.eventsCompared} (rows by table: ${[...fig.rowsCompared.entries()].map(([k, n]) => `${k} ${n}`).join(', ')}); exact confirmed-state checks ${fig.exactChecks}; unconfirmed txs checked not credited ${fig.unconfirmedChecked}`,
        `  max lag (polling loop, final head to caught up): ${fig.maxLagMs.toFixed(0)} ms, ${fig.maxLagBlocks} blocks`,
      ].join('\n'),
    );
    expect(fig.scenarios).toBe(indices.length);
    if (indices.length >= MAX_DEPTH) expect([...fig.depths.keys()].sort((a, b) => a - b)).toEqual([...Array(MAX_DEPTH).keys()].map((k) => k + 1));
    if (indices.length >= 20) {
      // The draw exercised both reorg tools, both drivers, and reorgs the indexer had to undo.
      expect(Math.min(fig.kinds.anvil_reorg, fig.kinds.anvil_rollback, fig.modes.step, fig.modes.push, fig.modes.loop)).toBeGreaterThan(0);
      expect(fig.rollbacksRequired).toBeGreaterThan(0);
    }
  },
  Math.max(120_000, SCENARIOS * 6_000),
);
