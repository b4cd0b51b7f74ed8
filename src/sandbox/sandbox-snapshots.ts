/**
 * The venue's state at an instant, as the sandbox's snapshots keep it (docs/sandbox.md,
 * "Snapshots, revert and reset"): the data directory's files (the databases, the perpetual
 * journal and history, the clock's file, the deployment records) copied while the venue is stopped,
 * and each chain's own snapshot (`evm_snapshot`, on anvil or a Hardhat node). What is in memory
 * (the engine, caches, nonce windows, stream sequences) is not copied: the venue is started again
 * on the restored files, so it is rebuilt from them as at any start.
 *
 * Used by src/app/revertible-stack.ts, which stops and starts the venue around these calls.
 */
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { ConflictError, NotFoundError } from '../errors/app-error.ts';
import type { VenueClockState } from '../lib/venue-clock.ts';
import type { SavedFaults } from './fault-registry.ts';

/** Where the snapshots' files are, under the data directory (removed at the process's start and stop). */
export const SNAPSHOTS_DIR = 'sandbox-snapshots';
/** The seeded venue's files, taken at the first start of a data directory (`POST /reset` returns to them). */
export const SEED_DIR = 'sandbox-seed';
/** The venue clock's state at the seed (in the seed's folder only: never mirrored into the data directory). */
export const SEED_CLOCK_FILE = 'sandbox-seed-clock.json';
/** An embedded anvil's state file: the chain is snapshotted by its node, the file is only the seed's. */
const ANVIL_STATE = 'anvil-state.json';

/** Names never copied or restored: the snapshots themselves and the seed's clock. */
const NEVER = new Set([SNAPSHOTS_DIR, SEED_DIR, `${SEED_DIR}.partial`, SEED_CLOCK_FILE]);

/**
 * Whether a file is the venue's state: not NEVER's names, and not what belongs to the running
 * processes (an anvil's owner file `<state>.pid`, the half-written `*.tmp` of an atomic write).
 */
const venueFile = (name: string) => !NEVER.has(name) && !name.endsWith('.pid') && !name.endsWith('.tmp');

export interface ChainSnapshot {
  rpcUrl: string;
  /** The node's snapshot id (anvil and Hardhat count from 0x0 up). */
  id: string;
}

export interface VenueSnapshot {
  id: string;
  createdAt: number;
  /** The venue clock's state when it was taken (advance and, if frozen, the instant). */
  clock: VenueClockState;
  /** The sandbox's faults in force when it was taken (held in the process, so kept here). */
  faults: SavedFaults;
  chains: ChainSnapshot[];
}

/** A JSON-RPC call to a chain's node (plain fetch: the venue's clients are stopped while this runs). */
export async function chainRpc(rpcUrl: string, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = (await res.json()) as { result?: unknown; error?: { message?: string } };
  if (body.error) throw new ConflictError(`snapshots: the chain's node refused ${method} (an anvil or Hardhat node is needed): ${body.error.message ?? 'error'}`);
  return body.result;
}

/**
 * Copies `from` into `to` as a mirror: every file and folder of `from` (but NEVER's names and,
 * unless `withChainState`, the anvil state files), and what `to` has beyond that removed.
 */
export function mirrorDir(from: string, to: string, opts: { withChainState: boolean }): void {
  fs.mkdirSync(to, { recursive: true });
  const keep = (name: string) => venueFile(name) && (opts.withChainState || name !== ANVIL_STATE);
  const names = new Set(fs.readdirSync(from).filter(keep));
  for (const name of fs.readdirSync(to)) {
    if (keep(name) && !names.has(name)) fs.rmSync(path.join(to, name), { recursive: true, force: true });
  }
  for (const name of names) {
    const src = path.join(from, name);
    const dst = path.join(to, name);
    const stat = fs.statSync(src);
    if (stat.isDirectory()) mirrorDir(src, dst, opts);
    else fs.copyFileSync(src, dst);
  }
}

/**
 * Copies `from` (a snapshot's still files) to `to`, a folder made anew, off the event loop: the
 * copies run on libuv's threads. Answers whether every file was copied.
 */
async function copyTree(from: string, to: string): Promise<boolean> {
  try {
    await fs.promises.rm(to, { recursive: true, force: true });
    const pairs: Array<[string, string]> = [];
    const walk = async (src: string, dst: string) => {
      await fs.promises.mkdir(dst, { recursive: true });
      for (const entry of await fs.promises.readdir(src, { withFileTypes: true })) {
        if (entry.isDirectory()) await walk(path.join(src, entry.name), path.join(dst, entry.name));
        else pairs.push([path.join(src, entry.name), path.join(dst, entry.name)]);
      }
    };
    await walk(from, to);
    await Promise.all(pairs.map(([a, b]) => fs.promises.copyFile(a, b)));
    return true;
  } catch {
    return false;
  }
}

/**
 * Puts the files of `from` (a copy made for this, used up) in place in `to` by renaming them, as
 * mirrorDir would copy them: what `to` has beyond them is removed, but the chains' state files.
 * The files replaced are moved into `trash` (on the same disk) rather than unlinked: freeing a
 * 33 MB file's blocks was half of the move; the caller empties it off the event loop.
 */
function moveInto(from: string, to: string, trash: string): void {
  fs.mkdirSync(to, { recursive: true });
  fs.mkdirSync(trash, { recursive: true });
  const keep = (name: string) => venueFile(name) && name !== ANVIL_STATE;
  const names = new Set(fs.readdirSync(from).filter(keep));
  let n = 0;
  const aside = (file: string) => fs.renameSync(file, path.join(trash, `${n++}-${path.basename(file)}`));
  for (const name of fs.readdirSync(to)) {
    if (keep(name) && !names.has(name)) aside(path.join(to, name));
  }
  for (const name of names) {
    const src = path.join(from, name);
    const dst = path.join(to, name);
    if (fs.statSync(src).isDirectory()) {
      moveInto(src, dst, path.join(trash, `${n++}-${name}`));
      continue;
    }
    if (fs.existsSync(dst)) aside(dst);
    fs.renameSync(src, dst);
  }
}

/** The clock's state kept with the seed; undefined for a seed made before it was kept. */
export function readSeedClock(seedDir: string): VenueClockState | undefined {
  try {
    const saved = JSON.parse(fs.readFileSync(path.join(seedDir, SEED_CLOCK_FILE), 'utf8')) as VenueClockState;
    return Number.isSafeInteger(saved.advancedMs) ? saved : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Copies a running venue's data directory into `to` (a fresh folder): each SQLite database by
 * SQLite's online backup (a consistent copy while its writers go on; its WAL and shared-memory
 * files are not copied), the rest as files, but the chains' state files: the caller flushes and
 * copies those after the databases. For the seed: taken just after the first start, when the only
 * writers are the simulator, the market maker and the indexer, whose state the start after a reset
 * rebuilds.
 */
export async function copyLiveDir(from: string, to: string): Promise<void> {
  fs.mkdirSync(to, { recursive: true });
  for (const name of fs.readdirSync(from)) {
    if (!venueFile(name) || name === ANVIL_STATE || name.endsWith('.sqlite-wal') || name.endsWith('.sqlite-shm')) continue;
    const src = path.join(from, name);
    const dst = path.join(to, name);
    if (fs.statSync(src).isDirectory()) await copyLiveDir(src, dst);
    else if (name.endsWith('.sqlite')) {
      const db = new BetterSqlite3(src, { readonly: true, fileMustExist: true });
      try {
        await db.backup(dst);
      } finally {
        db.close();
      }
    } else fs.copyFileSync(src, dst);
  }
}

/**
 * The process's snapshots: ids handed out as `snap-1`, `snap-2`…, their files under
 * DATA_DIR/sandbox-snapshots/<id>. A revert to one drops every one taken after it (their chain
 * snapshots are gone with the revert, as anvil and Hardhat do) and keeps it, usable again.
 */
export function createSnapshotStore(dataDir: string) {
  const root = path.join(dataDir, SNAPSHOTS_DIR);
  fs.rmSync(root, { recursive: true, force: true });
  const snapshots = new Map<string, VenueSnapshot>();
  // Each snapshot's files twice: kept, and a spare that a revert renames into place (the copy of a
  // 33 MB database was 20 ms of every revert) and copies again in the background after it.
  const files = (id: string) => path.join(root, id);
  const spareOf = (id: string) => path.join(root, `${id}.spare`);
  const spares = new Map<string, Promise<boolean>>();
  const makeSpare = (id: string) => spares.set(id, copyTree(files(id), spareOf(id)));
  let trashes = 0;
  let counter = 0;
  const get = (id: string): VenueSnapshot => {
    const snap = snapshots.get(id);
    if (!snap) throw new NotFoundError(`snapshot ${id}`);
    return snap;
  };
  return {
    list: (): VenueSnapshot[] => [...snapshots.values()],
    get,
    /** Takes one: the venue must be stopped (its files still). */
    async take(clock: VenueClockState, faults: SavedFaults, rpcUrls: readonly string[], now: number): Promise<VenueSnapshot> {
      const id = `snap-${++counter}`;
      mirrorDir(dataDir, files(id), { withChainState: false });
      const chains: ChainSnapshot[] = [];
      for (const rpcUrl of rpcUrls) chains.push({ rpcUrl, id: String(await chainRpc(rpcUrl, 'evm_snapshot')) });
      const snap: VenueSnapshot = { id, createdAt: now, clock, faults, chains };
      snapshots.set(id, snap);
      makeSpare(id);
      return snap;
    },
    /**
     * Puts the venue's files and chains back to `id` (the venue stopped), takes the chains'
     * snapshots again so the id stays usable, and drops the snapshots taken after it. Answers their ids.
     */
    async revert(id: string): Promise<{ snapshot: VenueSnapshot; dropped: string[] }> {
      const snap = get(id);
      for (const chain of snap.chains) {
        const done = await chainRpc(chain.rpcUrl, 'evm_revert', [chain.id]);
        if (done !== true) throw new ConflictError(`snapshots: the chain at ${chain.rpcUrl} no longer has snapshot ${chain.id} (was the node restarted?)`);
      }
      // The spare, made after the last take or revert (long done unless reverts follow at once);
      // the files copied as before if it could not be made.
      if (await spares.get(id)) {
        // Used up from here: a move that fails half way leaves no spare, and the next revert copies.
        spares.delete(id);
        const trash = path.join(root, `trash-${++trashes}`);
        moveInto(spareOf(id), dataDir, trash);
        void fs.promises.rm(trash, { recursive: true, force: true }).catch(() => undefined);
      } else mirrorDir(files(id), dataDir, { withChainState: false });
      makeSpare(id);
      for (const chain of snap.chains) chain.id = String(await chainRpc(chain.rpcUrl, 'evm_snapshot'));
      // evm_revert takes the node's clock back to the snapshot's block too (anvil resets it there):
      // the chain would run behind the venue's clock by the time since the snapshot, where the
      // clock's doc allows a second (docs/sandbox.md, "Clock"). A block at the venue's chain time
      // (the wall clock plus the snapshot's advance, frozen or not) puts it back.
      const chainNow = Math.floor((Date.now() + snap.clock.advancedMs) / 1000);
      for (const chain of snap.chains) {
        const latest = (await chainRpc(chain.rpcUrl, 'eth_getBlockByNumber', ['latest', false])) as { timestamp: string };
        if (chainNow <= Number(latest.timestamp)) continue;
        await chainRpc(chain.rpcUrl, 'evm_setNextBlockTimestamp', [chainNow]);
        await chainRpc(chain.rpcUrl, 'evm_mine');
      }
      const dropped = [...snapshots.keys()].filter((other) => seq(other) > seq(id));
      for (const gone of dropped) drop(gone);
      return { snapshot: snap, dropped };
    },
    /** Forgets one and removes its files (its chain snapshot stays in the node, unused). */
    drop: (id: string) => {
      get(id);
      drop(id);
    },
    /** Forgets every one (a reset starts the chains again: their snapshots are gone). */
    clear() {
      for (const id of [...snapshots.keys()]) drop(id);
    },
  };
  function drop(id: string) {
    snapshots.delete(id);
    fs.rmSync(files(id), { recursive: true, force: true });
    // Its spare once any copy under way is done (it fails, its source gone, or completes).
    const spare = spares.get(id);
    spares.delete(id);
    void spare?.then(() => fs.promises.rm(spareOf(id), { recursive: true, force: true })).catch(() => undefined);
  }
}

export type SnapshotStore = ReturnType<typeof createSnapshotStore>;

function seq(id: string): number {
  return Number(id.slice('snap-'.length));
}
