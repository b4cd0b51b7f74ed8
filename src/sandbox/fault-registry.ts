/**
 * The faults the sandbox has injected (docs/sandbox.md, "Faults"), held in the process: the embedded
 * stack runs every role in one process, so the APIs' request hook (src/http/request-faults.ts), the
 * executor and the chain see the same registry. Counted faults (`rate-limit`, `http-503`) leave once
 * their count is used up; the others (`executor-paused`, `chain-stall`) stand until cleared, but for
 * `stream-drop`, which acts once, when set, on the stream endpoints attached here, and is not kept.
 */
import { randomUUID } from 'node:crypto';
import { SANDBOX_STREAM_DROP_CLOSE, type SandboxFault, type SandboxFaultKind, type SandboxStream } from '@tokex/contract';
import { ConflictError } from '../errors/app-error.ts';
import type { DroppableStream, RequestFault, RequestFaultProbe, RequestFaultSource, StreamDropMode } from '../http/request-faults.ts';

/** A fault as it is set: the kind with the fields that kind takes (checked by the service). */
export type FaultSpec =
  | { kind: 'rate-limit'; apiKey: string; count: number; retryAfterSeconds: number }
  | { kind: 'http-503'; path: string; count: number; cause: 'storage' | 'chain' }
  | { kind: 'executor-paused' }
  | { kind: 'chain-stall' }
  | { kind: 'stream-drop'; stream: SandboxStream; mode: StreamDropMode };

/** Faults as `save` kept them (opaque to the caller). */
export interface SavedFaults {
  readonly entries: ReadonlyArray<{ fault: SandboxFault; spec: FaultSpec }>;
}

export interface FaultRegistry extends RequestFaultSource {
  /**
   * Adds a fault; a standing kind already set is answered as it is (setting it twice changes nothing).
   * A `stream-drop` drops the connections now and answers how many, without being kept; one whose
   * API has no stream endpoint attached here is a ConflictError.
   */
  add(spec: FaultSpec): SandboxFault;
  /** The faults in force, oldest first. */
  list(): SandboxFault[];
  /** Removes every fault; answers them as they were. */
  clear(): SandboxFault[];
  /** The faults in force, kept as they are now (counts left included) for `restore`: a sandbox snapshot's. */
  save(): SavedFaults;
  /** Puts the faults of a `save` back in force, as they were then (a revert to the snapshot). */
  restore(saved: SavedFaults): void;
  /** Whether a fault of `kind` is in force. */
  has(kind: SandboxFaultKind): boolean;
  /**
   * The executor's question at each tick: whether `executor-paused` stands. Each tick it holds is
   * counted on the fault (`heldTicks`), so a client can tell the executor has looked and done nothing.
   */
  executorHeld(): boolean;
}

interface Entry {
  fault: SandboxFault;
  spec: FaultSpec;
}

export interface FaultRegistryOptions {
  /** Paths no fault touches: the sandbox's own routes, so that a fault on `/` can still be cleared. */
  exemptPrefixes: readonly string[];
  now?: () => number;
}

export function createFaultRegistry(opts: FaultRegistryOptions): FaultRegistry {
  const now = opts.now ?? Date.now;
  let entries: Entry[] = [];
  // The stream endpoints of the APIs, attached as they start (an API's set: one per chain at most).
  const streams = new Map<string, Set<DroppableStream>>();

  const dropStreams = (stream: SandboxStream, mode: StreamDropMode): Record<string, number> => {
    const apis = stream === 'all' ? [...streams.keys()].filter((api) => streams.get(api)!.size > 0).sort() : [stream];
    for (const api of apis) {
      if ((streams.get(api)?.size ?? 0) === 0) throw new ConflictError(`faults: stream-drop: this process serves no ${api} stream (/${api === 'perp' ? 'v4/public/ws' : 'api/v1/ws'})`);
    }
    if (apis.length === 0) throw new ConflictError('faults: stream-drop: this process serves no stream');
    const dropped: Record<string, number> = {};
    for (const api of apis) dropped[api] = [...streams.get(api)!].reduce((n, s) => n + s.drop(mode), 0);
    return dropped;
  };
  const snapshot = (e: Entry): SandboxFault => ({ ...e.fault });

  /** The first counted fault of `kind` that applies and has requests left; one of them used up. */
  const use = (kind: 'rate-limit' | 'http-503', applies: (spec: FaultSpec) => boolean): Entry | undefined => {
    const entry = entries.find((e) => e.spec.kind === kind && applies(e.spec));
    if (entry === undefined) return undefined;
    entry.fault.remaining = (entry.fault.remaining ?? 1) - 1;
    if (entry.fault.remaining <= 0) entries = entries.filter((e) => e !== entry);
    return entry;
  };

  return {
    add(spec) {
      if (spec.kind === 'stream-drop') {
        const dropped = dropStreams(spec.stream, spec.mode);
        return {
          id: randomUUID(),
          kind: spec.kind,
          createdAt: now(),
          stream: spec.stream,
          mode: spec.mode,
          ...(spec.mode === 'close' ? { closeCode: SANDBOX_STREAM_DROP_CLOSE.code } : {}),
          dropped,
        };
      }
      if (spec.kind === 'executor-paused' || spec.kind === 'chain-stall') {
        const standing = entries.find((e) => e.spec.kind === spec.kind);
        if (standing) return snapshot(standing);
      }
      const fault: SandboxFault = { id: randomUUID(), kind: spec.kind, createdAt: now() };
      if (spec.kind === 'executor-paused') fault.heldTicks = 0;
      if (spec.kind === 'rate-limit') Object.assign(fault, { apiKey: spec.apiKey, count: spec.count, remaining: spec.count, retryAfterSeconds: spec.retryAfterSeconds });
      if (spec.kind === 'http-503') Object.assign(fault, { path: spec.path, count: spec.count, remaining: spec.count, cause: spec.cause });
      const entry = { fault, spec };
      entries.push(entry);
      return snapshot(entry);
    },
    list: () => entries.map(snapshot),
    clear() {
      const cleared = entries.map(snapshot);
      entries = [];
      return cleared;
    },
    save: () => ({ entries: entries.map((e) => ({ fault: { ...e.fault }, spec: { ...e.spec } })) }),
    restore(saved) {
      entries = saved.entries.map((e) => ({ fault: { ...e.fault }, spec: { ...e.spec } }));
    },
    has: (kind) => entries.some((e) => e.spec.kind === kind),
    executorHeld() {
      const paused = entries.find((e) => e.spec.kind === 'executor-paused');
      if (paused === undefined) return false;
      paused.fault.heldTicks = (paused.fault.heldTicks ?? 0) + 1;
      return true;
    },
    attachStream(api, stream) {
      const set = streams.get(api) ?? new Set<DroppableStream>();
      streams.set(api, set);
      set.add(stream);
      return () => {
        set.delete(stream);
      };
    },
    take(probe: RequestFaultProbe): RequestFault | undefined {
      if (entries.length === 0) return undefined;
      if (opts.exemptPrefixes.some((p) => probe.path === p || probe.path.startsWith(`${p}/`))) return undefined;
      // A limiter answers before the route runs, an outage inside it: the rate limit comes first.
      const { apiKey, path } = probe;
      if (apiKey !== undefined) {
        const limited = use('rate-limit', (s) => s.kind === 'rate-limit' && s.apiKey === apiKey);
        if (limited && limited.spec.kind === 'rate-limit') return { kind: 'rate-limited', retryAfterSeconds: limited.spec.retryAfterSeconds };
      }
      const outage = use('http-503', (s) => s.kind === 'http-503' && path.startsWith(s.path));
      if (outage && outage.spec.kind === 'http-503') return { kind: 'unavailable', cause: outage.spec.cause };
      return undefined;
    },
  };
}
