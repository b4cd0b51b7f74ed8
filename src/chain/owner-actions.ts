/**
 * Owner changes behind the venue's timelock (docs/security.md, "Owner and upgrader"; issue 43 item 3).
 *
 * Every stateful contract of a venue deployed by 0.2.0 is owned, and upgraded, by the venue's
 * `VenueTimelock` (OpenZeppelin's TimelockController): the admin key (OPERATOR_PRIVATE_KEY) is its
 * proposer, executor and canceller, and can no longer call an `onlyOwner` function itself. An owner
 * change is scheduled (`CallScheduled`, which GET config shows), waits the timelock's delay, then is
 * executed. `ownerCalls` is the one way the app makes owner changes: it sends directly when the
 * target's owner is the admin's own account (a record from before the timelock, or a contract not
 * handed over yet), and otherwise schedules through the timelock and executes at once when the
 * delay allows (delay 0: the embedded demo), or answers when it will be executable.
 *
 * Scheduling is idempotent: an operation's salt is derived from its calls and a generation (the first
 * whose operation is not done yet), so a run repeated before the delay passed finds its own
 * operation waiting instead of scheduling it twice, and a later run executes it once it is ready.
 */
import { encodeAbiParameters, encodeFunctionData, getAddress, keccak256, parseAbi, parseAbiItem, type Abi, type Address, type Hex } from 'viem';
import { AppError } from '../errors/app-error.ts';
import { venueTimelockAbi, venueTimelockBytecode } from './abi/generated/index.ts';
import { toChainError, type ChainPublicClient, type ChainWalletClient } from './chain-client.ts';
import type { ContractAddresses, DeploymentRecord, VenueDeployment } from './deployment-file.ts';

/** The owner and upgrader functions every venue contract shares (Ownable2Step and VenueUpgradeable). */
export const ownableAbi = parseAbi([
  'function owner() view returns (address)',
  'function pendingOwner() view returns (address)',
  'function transferOwnership(address)',
  'function acceptOwnership()',
  'function upgrader() view returns (address)',
  'function pendingUpgrader() view returns (address)',
  'function transferUpgrader(address)',
  'function acceptUpgrader()',
]);

export type { VenueTimelockRecord } from './deployment-file.ts';

/** One owner call. */
export interface OwnerCallSpec {
  target: Address;
  abi: Abi;
  functionName: string;
  args?: readonly unknown[];
  /** Whose authority the call needs: the contract's `owner()` (default) or its `upgrader()`. */
  authority?: 'owner' | 'upgrader';
}

export type OwnerCallResult =
  /** Sent and mined: directly by the owner account, or executed through the timelock. */
  | { done: true; via: 'owner' | 'timelock'; operationId?: Hex }
  /** Scheduled in the timelock; `readyAt` (seconds since the epoch, chain time) is when it may be executed. */
  | { done: false; scheduled: true; operationId: Hex; readyAt: number };

const ZERO32 = `0x${'0'.repeat(64)}` as Hex;
/** TimelockController.OperationState. */
const OPERATION_STATE = ['unset', 'waiting', 'ready', 'done'] as const;

async function wait(publicClient: ChainPublicClient, hash: Hex, label: string): Promise<void> {
  const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 120_000 });
  if (receipt.status !== 'success') throw new AppError('INTERNAL', `owner call: ${label} reverted`, { detail: { txHash: hash } });
}

/**
 * The node's estimate with a margin. An estimate is the least gas that succeeded in the pending
 * block, to within the node's search tolerance; the mined block can differ (its timestamp, a call
 * that gets only 63/64 of what is left), and a limit at the edge then runs out of gas.
 */
export async function gasWithMargin(publicClient: ChainPublicClient, wallet: ChainWalletClient, to: Address, data: Hex): Promise<bigint> {
  const gas = await publicClient.estimateGas({ account: wallet.account, to, data });
  return (gas * 13n) / 10n + 20_000n;
}

async function send(publicClient: ChainPublicClient, wallet: ChainWalletClient, label: string, to: Address, data: Hex): Promise<void> {
  const gas = await gasWithMargin(publicClient, wallet, to, data);
  const hash = await wallet.sendTransaction({ account: wallet.account, chain: wallet.chain, to, data, gas });
  await wait(publicClient, hash, label);
}

/**
 * Schedules `calls` as one timelock operation (executes it too when it is ready), or executes the
 * operation a previous run scheduled once its delay has passed. The wallet must hold the timelock's
 * proposer and executor roles. Answers the operation's state.
 */
export async function timelockCalls(params: {
  publicClient: ChainPublicClient;
  wallet: ChainWalletClient;
  timelock: Address;
  calls: ReadonlyArray<{ target: Address; data: Hex }>;
  label?: string;
}): Promise<OwnerCallResult> {
  const { publicClient, wallet, timelock, calls } = params;
  if (calls.length === 0) throw new AppError('INTERNAL', 'owner call: nothing to schedule');
  const label = params.label ?? 'timelock operation';
  const targets = calls.map((c) => c.target);
  const values = calls.map(() => 0n);
  const payloads = calls.map((c) => c.data);
  const single = calls.length === 1;
  const read = <T>(functionName: string, args: readonly unknown[]) =>
    publicClient.readContract({ address: timelock, abi: venueTimelockAbi, functionName: functionName as never, args: args as never }) as Promise<T>;
  try {
    // The first generation of this call whose operation is not done yet: a repeated change (an
    // operator granted again after a revoke) is a new operation, a repeated run finds its own.
    let salt: Hex = ZERO32;
    let id: Hex = ZERO32;
    let state: (typeof OPERATION_STATE)[number] = 'unset';
    for (let generation = 0n; ; generation++) {
      if (generation > 10_000n) throw new AppError('INTERNAL', `owner call: ${label}: too many earlier operations with the same calls`);
      salt = keccak256(encodeAbiParameters([{ type: 'address[]' }, { type: 'bytes[]' }, { type: 'uint256' }], [targets, payloads, generation]));
      id = single ? await read<Hex>('hashOperation', [targets[0], 0n, payloads[0], ZERO32, salt]) : await read<Hex>('hashOperationBatch', [targets, values, payloads, ZERO32, salt]);
      state = OPERATION_STATE[await read<number>('getOperationState', [id])];
      if (state !== 'done') break;
    }
    if (state === 'unset') {
      const delay = await read<bigint>('getMinDelay', []);
      const data = single
        ? encodeFunctionData({ abi: venueTimelockAbi, functionName: 'schedule', args: [targets[0], 0n, payloads[0], ZERO32, salt, delay] })
        : encodeFunctionData({ abi: venueTimelockAbi, functionName: 'scheduleBatch', args: [targets, values, payloads, ZERO32, salt, delay] });
      await send(publicClient, wallet, `schedule ${label}`, timelock, data);
      state = OPERATION_STATE[await read<number>('getOperationState', [id])];
    }
    if (state === 'waiting') {
      return { done: false, scheduled: true, operationId: id, readyAt: Number(await read<bigint>('getTimestamp', [id])) };
    }
    const data = single
      ? encodeFunctionData({ abi: venueTimelockAbi, functionName: 'execute', args: [targets[0], 0n, payloads[0], ZERO32, salt] })
      : encodeFunctionData({ abi: venueTimelockAbi, functionName: 'executeBatch', args: [targets, values, payloads, ZERO32, salt] });
    await send(publicClient, wallet, `execute ${label}`, timelock, data);
    return { done: true, via: 'timelock', operationId: id };
  } catch (err) {
    throw err instanceof AppError ? err : toChainError(err);
  }
}

/**
 * Makes owner changes with the admin's wallet: calls whose target's owner (or upgrader) is the
 * wallet's account are sent directly, one after another; the others must be owned by a timelock
 * (`timelock`, or any contract answering `getMinDelay()`) and go through it as one operation per
 * timelock. Answers one result for the direct calls and one per timelock operation, in that order;
 * `done` is true only when everything has taken effect.
 */
export async function ownerCalls(params: {
  publicClient: ChainPublicClient;
  wallet: ChainWalletClient;
  calls: readonly OwnerCallSpec[];
  label?: string;
}): Promise<{ done: boolean; results: OwnerCallResult[] }> {
  const { publicClient, wallet } = params;
  const me = wallet.account.address.toLowerCase();
  const direct: Array<{ target: Address; data: Hex; label: string }> = [];
  const byTimelock = new Map<Address, Array<{ target: Address; data: Hex }>>();
  try {
    const authorities = new Map<string, Address>();
    for (const c of params.calls) {
      const which = c.authority ?? 'owner';
      const key = `${c.target.toLowerCase()}:${which}`;
      let authority = authorities.get(key);
      if (authority === undefined) {
        authority = getAddress(await publicClient.readContract({ address: c.target, abi: ownableAbi, functionName: which }));
        authorities.set(key, authority);
      }
      const data = encodeFunctionData({ abi: c.abi, functionName: c.functionName, args: c.args ?? [] } as never);
      if (authority.toLowerCase() === me) {
        direct.push({ target: c.target, data, label: `${c.functionName} on ${c.target}` });
        continue;
      }
      if (!(await isTimelock(publicClient, authority))) {
        throw new AppError('INTERNAL', `owner call: ${c.functionName} on ${c.target}: its ${which} is ${authority}, neither this key (${wallet.account.address}) nor a timelock`);
      }
      const list = byTimelock.get(authority) ?? [];
      list.push({ target: c.target, data });
      byTimelock.set(authority, list);
    }
    const results: OwnerCallResult[] = [];
    for (const d of direct) await send(publicClient, wallet, d.label, d.target, d.data);
    if (direct.length > 0) results.push({ done: true, via: 'owner' });
    for (const [timelock, calls] of byTimelock) {
      results.push(await timelockCalls({ publicClient, wallet, timelock, calls, label: params.label }));
    }
    return { done: results.every((r) => r.done), results };
  } catch (err) {
    throw err instanceof AppError ? err : toChainError(err);
  }
}

/** One owner call (see ownerCalls). */
export async function ownerCall(params: { publicClient: ChainPublicClient; wallet: ChainWalletClient; label?: string } & OwnerCallSpec): Promise<OwnerCallResult> {
  const { publicClient, wallet, label, ...call } = params;
  const { results } = await ownerCalls({ publicClient, wallet, calls: [call], label: label ?? call.functionName });
  return results[0];
}

/** The first operation still waiting, for a log line: "scheduled, executable at …". */
export function describePending(results: readonly OwnerCallResult[]): string | undefined {
  const waiting = results.filter((r): r is Extract<OwnerCallResult, { scheduled: true }> => !r.done);
  if (waiting.length === 0) return undefined;
  const at = Math.max(...waiting.map((r) => r.readyAt));
  return `scheduled in the timelock, executable at ${new Date(at * 1000).toISOString()}`;
}

const timelockCache = new Map<string, boolean>();

/** Whether `address` is a timelock (answers `getMinDelay()`). */
export async function isTimelock(publicClient: ChainPublicClient, address: Address): Promise<boolean> {
  const key = address.toLowerCase();
  const known = timelockCache.get(key);
  if (known !== undefined) return known;
  const code = await publicClient.getCode({ address });
  if (code === undefined || code === '0x') return false;
  const answer = await publicClient.readContract({ address, abi: venueTimelockAbi, functionName: 'getMinDelay' }).then(() => true, () => false);
  timelockCache.set(key, answer);
  return answer;
}

// ------------------------------------------------------------------ deployment and hand-over

/** The role hashes of OpenZeppelin's TimelockController. */
export const TIMELOCK_ROLES = {
  proposer: keccak256(new TextEncoder().encode('PROPOSER_ROLE')),
  executor: keccak256(new TextEncoder().encode('EXECUTOR_ROLE')),
  canceller: keccak256(new TextEncoder().encode('CANCELLER_ROLE')),
} as const;

/**
 * What a venue deployment passes to `TxBatch.deploy` for its timelock: delay 0 at first (the
 * hand-over's acceptances go through at once), the admin its proposer (and so canceller) and
 * executor, no admin but the timelock itself. `handOverToTimelock` sets the configured delay.
 */
export function timelockDeployArgs(admin: Address): { abi: Abi; bytecode: Hex; args: readonly unknown[] } {
  return { abi: venueTimelockAbi, bytecode: venueTimelockBytecode, args: [0n, [admin], [admin], '0x0000000000000000000000000000000000000000'] };
}

/** The addresses of a section's contracts behind proxies (its stateful ones), by path. */
export function statefulContractsOf(section: VenueDeployment): Array<{ path: string; address: Address; contract: string }> {
  const out: Array<{ path: string; address: Address; contract: string }> = [];
  for (const [path, entry] of Object.entries(section.code ?? {})) {
    if (entry.implementation === undefined) continue;
    let node: Address | ContractAddresses | undefined = section.contracts;
    for (const part of path.split('.')) node = node === undefined || typeof node === 'string' ? undefined : node[part];
    if (typeof node === 'string') out.push({ path, address: getAddress(node), contract: entry.contract });
  }
  return out;
}

export interface HandOverResult {
  /** `venue path` of each contract whose ownership or upgrade role moved to the timelock now. */
  handedOver: string[];
  /** Operations still waiting for the timelock's delay (an acceptance or the delay change). */
  pending: OwnerCallResult[];
  /** The delay set now (seconds), when it changed. */
  delaySet?: number;
}

/**
 * Hands every stateful contract of each venue that has a timelock over to it, then sets the
 * timelock's delay to `delaySeconds` (docs/security.md): `transferOwnership` and `transferUpgrader`
 * by the admin where it still holds them, the timelock's `acceptOwnership` and `acceptUpgrader` as
 * one timelock operation, then `updateDelay` through the timelock itself. Idempotent and resumable:
 * a contract already the timelock's is left alone, and a contract owned by someone else is reported
 * in the error. Run after the deployment's configuration (operators, feeds, funding): a venue is
 * deployed with its timelock's delay 0, so until this runs the admin acts at once.
 */
export async function handOverToTimelock(params: {
  publicClient: ChainPublicClient;
  wallet: ChainWalletClient;
  record: DeploymentRecord;
  delaySeconds: number;
}): Promise<HandOverResult> {
  const { publicClient, wallet, record } = params;
  const me = wallet.account.address.toLowerCase();
  const result: HandOverResult = { handedOver: [], pending: [] };
  try {
    for (const [venue, section] of Object.entries(record.venues)) {
      const tl = section.timelock;
      if (!tl) continue;
      const timelock = getAddress(tl.address);
      const accepts: Array<{ target: Address; data: Hex }> = [];
      for (const c of statefulContractsOf(section)) {
        const [owner, pendingOwner, upgrader, pendingUpgrader] = await Promise.all(
          (['owner', 'pendingOwner', 'upgrader', 'pendingUpgrader'] as const).map((fn) => publicClient.readContract({ address: c.address, abi: ownableAbi, functionName: fn }).then(getAddress)),
        );
        let moved = false;
        for (const [holder, pending, transfer, accept] of [
          [owner, pendingOwner, 'transferOwnership', 'acceptOwnership'],
          [upgrader, pendingUpgrader, 'transferUpgrader', 'acceptUpgrader'],
        ] as const) {
          if (holder === timelock) continue;
          if (holder.toLowerCase() !== me) {
            throw new AppError('INTERNAL', `timelock hand-over: ${venue} ${c.path} (${c.address}) is held by ${holder}, neither the admin key nor the venue's timelock`);
          }
          if (pending !== timelock) await send(publicClient, wallet, `${venue} ${c.path}.${transfer}`, c.address, encodeFunctionData({ abi: ownableAbi, functionName: transfer, args: [timelock] }));
          accepts.push({ target: c.address, data: encodeFunctionData({ abi: ownableAbi, functionName: accept }) });
          moved = true;
        }
        if (moved) result.handedOver.push(`${venue} ${c.path}`);
      }
      if (accepts.length > 0) {
        const r = await timelockCalls({ publicClient, wallet, timelock, calls: accepts, label: `${venue}: the timelock accepts ownership` });
        if (!r.done) result.pending.push(r);
      }
      const current = Number(await publicClient.readContract({ address: timelock, abi: venueTimelockAbi, functionName: 'getMinDelay' }));
      if (current !== params.delaySeconds) {
        const r = await timelockCalls({ publicClient, wallet, timelock, label: `${venue}: timelock delay ${params.delaySeconds} s`, calls: [{ target: timelock, data: encodeFunctionData({ abi: venueTimelockAbi, functionName: 'updateDelay', args: [BigInt(params.delaySeconds)] }) }] });
        if (r.done) result.delaySet = params.delaySeconds;
        else result.pending.push(r);
      }
      section.timelock = { address: timelock, minDelay: Number(await publicClient.readContract({ address: timelock, abi: venueTimelockAbi, functionName: 'getMinDelay' })) };
    }
    return result;
  } catch (err) {
    throw err instanceof AppError ? err : toChainError(err);
  }
}

// ------------------------------------------------------------------ what is scheduled

/** One pending operation's call, for GET config's `scheduled`. */
export interface ScheduledCall {
  /** The operation's id (bytes32 hex). */
  id: Hex;
  /** Its index in a batch operation (0 for a single call). */
  index: number;
  /** The venue contract called: its path in the record (`stockRouter`, `stocks.AAPL`, `timelock`), or its address. */
  contract: string;
  target: Address;
  /** The function's name, when the selector is one of the venue's. */
  functionName?: string;
  /** The arguments as strings (addresses, decimal integers, JSON for tuples), when decoded. */
  args?: string[];
  data: Hex;
  /** When it may be executed, seconds since the epoch (chain time). */
  readyAt: number;
  /** The timelock that will execute it. */
  timelock: Address;
}

const callScheduledEvent = parseAbiItem('event CallScheduled(bytes32 indexed id, uint256 indexed index, address target, uint256 value, bytes data, bytes32 predecessor, uint256 delay)');
const callExecutedEvent = parseAbiItem('event CallExecuted(bytes32 indexed id, uint256 indexed index, address target, uint256 value, bytes data)');
const cancelledEvent = parseAbiItem('event Cancelled(bytes32 indexed id)');

/**
 * The operations scheduled in the venues' timelocks and neither executed nor cancelled, read from
 * their `CallScheduled`, `CallExecuted` and `Cancelled` events (from each venue's first block), with
 * each call decoded against `abis` (the venue's contracts' ABIs) where its selector is known.
 */
/** Blocks one `eth_getLogs` covers: providers limit the range (often to 10,000 blocks). */
const LOG_CHUNK = 5_000n;
/** Blocks scanned again at each refresh, so a shallow reorg's logs are read as they ended up. */
const LOG_OVERLAP = 32n;

type ScheduledLog = { id: Hex; index: bigint; target: Address; data: Hex; key: string };

/**
 * What a reader has seen of one timelock's events, so that each refresh reads only the blocks since
 * the last one, in ranges a provider accepts, instead of the whole history every time.
 */
export interface TimelockScanState {
  scannedTo: bigint;
  scheduled: Map<string, ScheduledLog>;
  closed: Set<string>;
}

async function scanTimelock(publicClient: ChainPublicClient, timelock: Address, fromBlock: bigint, state: TimelockScanState, chunk: bigint): Promise<void> {
  const head = await publicClient.getBlockNumber();
  let from = state.scannedTo >= fromBlock ? (state.scannedTo > LOG_OVERLAP ? state.scannedTo - LOG_OVERLAP : 0n) : fromBlock;
  if (from < fromBlock) from = fromBlock;
  while (from <= head) {
    const to = from + chunk - 1n < head ? from + chunk - 1n : head;
    const [scheduled, executed, cancelled] = await Promise.all([
      publicClient.getLogs({ address: timelock, event: callScheduledEvent, fromBlock: from, toBlock: to }),
      publicClient.getLogs({ address: timelock, event: callExecutedEvent, fromBlock: from, toBlock: to }),
      publicClient.getLogs({ address: timelock, event: cancelledEvent, fromBlock: from, toBlock: to }),
    ]);
    for (const l of scheduled) {
      const key = `${l.args.id!.toLowerCase()}:${l.args.index!}`;
      state.scheduled.set(key, { id: l.args.id!, index: l.args.index!, target: l.args.target!, data: l.args.data!, key });
    }
    for (const l of [...executed, ...cancelled]) state.closed.add(l.args.id!.toLowerCase());
    state.scannedTo = to;
    from = to + 1n;
  }
}

export async function readScheduledCalls(params: {
  publicClient: ChainPublicClient;
  record: DeploymentRecord;
  abis: readonly Abi[];
  /** Venues to read (default all with a timelock). */
  venues?: readonly string[];
  /** What an earlier read saw, per timelock address (lower case): updated in place. */
  scans?: Map<string, TimelockScanState>;
  /** Blocks an `eth_getLogs` covers. Default LOG_CHUNK (5,000). */
  logChunk?: bigint;
}): Promise<ScheduledCall[]> {
  const { publicClient, record } = params;
  const { decodeFunctionData } = await import('viem');
  const out: ScheduledCall[] = [];
  for (const [venue, section] of Object.entries(record.venues)) {
    if (!section.timelock || (params.venues && !params.venues.includes(venue))) continue;
    const timelock = getAddress(section.timelock.address);
    const names = new Map<string, string>([[timelock.toLowerCase(), 'timelock']]);
    const walk = (group: ContractAddresses, prefix: string) => {
      for (const [name, v] of Object.entries(group)) {
        if (typeof v === 'string') names.set(v.toLowerCase(), `${prefix}${name}`);
        else walk(v, `${prefix}${name}.`);
      }
    };
    walk(section.contracts, '');
    const fromBlock = BigInt(section.firstBlockNumber ?? section.blockNumber);
    const state = params.scans?.get(timelock.toLowerCase()) ?? { scannedTo: -1n, scheduled: new Map(), closed: new Set<string>() };
    params.scans?.set(timelock.toLowerCase(), state);
    await scanTimelock(publicClient, timelock, fromBlock, state, params.logChunk ?? LOG_CHUNK);
    const scheduled = [...state.scheduled.values()].map((l) => ({ args: { id: l.id, index: l.index, target: l.target, data: l.data } }));
    const closed = state.closed;
    // What is done or cancelled never comes back: the state keeps only what may still be waiting.
    for (const [key, l] of state.scheduled) if (closed.has(l.id.toLowerCase())) state.scheduled.delete(key);
    const ids = [...new Set(scheduled.map((l) => l.args.id!))].filter((id) => !closed.has(id.toLowerCase()));
    const readyAt = new Map<string, number>();
    for (const id of ids) {
      readyAt.set(id, Number(await publicClient.readContract({ address: timelock, abi: venueTimelockAbi, functionName: 'getTimestamp', args: [id] })));
    }
    for (const l of scheduled) {
      const id = l.args.id!;
      const at = readyAt.get(id);
      // Executed ones are filtered above; a timestamp of 0 is a cancelled operation whose event was missed.
      if (at === undefined || at <= 1) continue;
      const target = getAddress(l.args.target!);
      const data = l.args.data!;
      let functionName: string | undefined;
      let args: string[] | undefined;
      for (const abi of [venueTimelockAbi as Abi, ownableAbi as Abi, ...params.abis]) {
        try {
          const d = decodeFunctionData({ abi, data });
          functionName = d.functionName;
          args = (d.args ?? []).map((a) =>
            typeof a === 'string' ? a : typeof a === 'bigint' ? a.toString() : JSON.stringify(a, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
          break;
        } catch {
          // not this ABI's selector
        }
      }
      out.push({
        id,
        index: Number(l.args.index!),
        contract: `${venue}.${names.get(target.toLowerCase()) ?? target}`,
        target,
        ...(functionName !== undefined ? { functionName, args } : {}),
        data,
        readyAt: at,
        timelock,
      });
    }
  }
  return out.sort((a, b) => a.readyAt - b.readyAt || a.id.localeCompare(b.id) || a.index - b.index);
}

/**
 * `readScheduledCalls` behind a short cache, in the wire shape of GET config's `scheduled`
 * (readyAt in ms). A failed read answers the last good list (empty at first) and is retried at the
 * next call after the cache's age: GET config never fails for it.
 */
export function createScheduledChangesReader(params: {
  publicClient: ChainPublicClient;
  /** The record as the process holds it (read on every refresh: a later hand-over adds timelocks). */
  record: () => DeploymentRecord;
  abis: readonly Abi[];
  ttlMs?: number;
  onError?: (err: unknown) => void;
}): () => Promise<Array<{ operationId: string; index: number; contract: string; target: string; function?: string; args?: string[]; data: string; readyAt: number; timelock: string }>> {
  const ttl = params.ttlMs ?? 5_000;
  const scans = new Map<string, TimelockScanState>();
  let last: { at: number; value: Awaited<ReturnType<ReturnType<typeof createScheduledChangesReader>>> } | undefined;
  let inflight: Promise<void> | undefined;
  const refresh = async () => {
    try {
      const calls = await readScheduledCalls({ publicClient: params.publicClient, record: params.record(), abis: params.abis, scans });
      last = {
        at: Date.now(),
        value: calls.map((c) => ({
          operationId: c.id,
          index: c.index,
          contract: c.contract,
          target: c.target,
          ...(c.functionName !== undefined ? { function: c.functionName, args: c.args } : {}),
          data: c.data,
          readyAt: c.readyAt * 1000,
          timelock: c.timelock,
        })),
      };
    } catch (err) {
      params.onError?.(err);
      last = { at: Date.now(), value: last?.value ?? [] };
    }
  };
  return async () => {
    if (last === undefined || Date.now() - last.at >= ttl) {
      inflight ??= refresh().finally(() => {
        inflight = undefined;
      });
      await inflight;
    }
    return last!.value;
  };
}
