/**
 * The sequencer's last events in memory, for subscribers that start a little behind (the stream
 * task, the projector after a restart): the last `capacity` events, trimmed a quarter at a time.
 *
 * Held serialized, one buffer per published run of events (v8.serialize: exact, bigints included),
 * not as the engine's objects. Why: the ring holds 100,000 events by default, about six objects and
 * seven bigints an order. Every one of them lives long enough to be promoted to V8's old space, and
 * once the ring is full each new event pushes out one that dies there. At 1,600 single orders a
 * second that made the order thread's full collections come every 1–2 s with 5–8 ms pauses, the
 * tail of the order latency (docs/performance.md, "the tail's collections"). A run of events is one
 * buffer whose bytes live outside the JS heap; serializing it costs about 2.5 µs an order in group
 * commits of 20, and reading it back is only for a subscriber that starts behind.
 *
 * Below saturation a group commit holds one or two orders, and serializing each commit's events on
 * its own cost 16 µs an order (v8.serialize's fixed part) and left one small Buffer a commit to be
 * promoted and to die in old space. So the newest events wait in a tail of at most SEAL_AT events,
 * serialized together when it is full or `sealAfterMs` after its first event, whichever is first:
 * far shorter than the young generation's collections are apart, so the tail's objects die young.
 */
import v8 from 'node:v8';
import type { EngineEvent } from '../engine/engine-types.ts';

interface Chunk {
  /** Seq of the first event in `bytes`; the chunk's events have consecutive seqs. */
  first: number;
  /** Events in `bytes`. */
  count: number;
  bytes: Buffer;
}

const RESET_RUN = 1_024;
/** Events of the unserialized tail that make it a chunk at once. */
const SEAL_AT = 256;

export class EventRing {
  private chunks: Chunk[] = [];
  /** Index of the first chunk still held (chunks before it are dropped; compacted now and then). */
  private head = 0;
  /** Events of the head chunk trimmed away (its first `skip`). */
  private skip = 0;
  /** Events held, the tail's included. */
  private held = 0;
  /** The newest events, consecutive seqs after the last chunk's, not serialized yet. */
  private tail: EngineEvent[] = [];
  private sealTimer: NodeJS.Timeout | undefined;

  /** `sealAfterMs`: the longest an event waits in the tail before it is serialized (default 20). */
  constructor(
    private readonly capacity: number,
    private readonly sealAfterMs = 20,
  ) {}

  /** Events held. */
  get size(): number {
    return this.held;
  }

  /** Seq of the oldest event held, or undefined when none is. */
  oldestSeq(): number | undefined {
    const c = this.chunks[this.head];
    return c === undefined ? this.tail[0]?.seq : c.first + this.skip;
  }

  /** Appends events in seq order (a gap in seqs starts a chunk of its own). */
  push(events: readonly EngineEvent[]): void {
    if (this.capacity === 0 || events.length === 0) return;
    for (const e of events) {
      const last = this.tail[this.tail.length - 1];
      if (last !== undefined && e.seq !== last.seq + 1) this.seal();
      this.tail.push(e);
      this.held++;
      if (this.tail.length >= SEAL_AT) this.seal();
    }
    if (this.tail.length > 0 && this.sealTimer === undefined) {
      this.sealTimer = setTimeout(() => {
        this.sealTimer = undefined;
        this.seal();
      }, this.sealAfterMs);
      this.sealTimer.unref();
    }
    if (this.held > this.capacity + Math.max(1, this.capacity >> 2)) {
      this.seal();
      this.trimTo(this.capacity);
    }
  }

  /** Serializes the tail into a chunk of its own. */
  seal(): void {
    if (this.tail.length === 0) return;
    const run = this.tail;
    this.tail = [];
    this.chunks.push({ first: run[0].seq, count: run.length, bytes: v8.serialize(run) });
  }

  /** Stops the tail's timer (the tail is serialized first): for a sequencer that stops. */
  close(): void {
    this.seal();
    if (this.sealTimer !== undefined) clearTimeout(this.sealTimer);
    this.sealTimer = undefined;
  }

  /** Every event held with seq ≥ `fromSeq`, in order: copies, never the objects pushed. */
  since(fromSeq: number): EngineEvent[] {
    this.seal();
    const out: EngineEvent[] = [];
    for (let i = this.head; i < this.chunks.length; i++) {
      const c = this.chunks[i];
      if (c.first + c.count <= fromSeq) continue;
      const lowest = Math.max(fromSeq, i === this.head ? c.first + this.skip : c.first);
      for (const e of v8.deserialize(c.bytes) as EngineEvent[]) if (e.seq >= lowest) out.push(e);
    }
    return out;
  }

  /** Holds exactly `events` (seq order), as after a restart. */
  reset(events: readonly EngineEvent[]): void {
    this.chunks = [];
    this.head = 0;
    this.skip = 0;
    this.held = 0;
    this.tail = [];
    if (this.capacity === 0) return;
    // In runs of RESET_RUN: a restart replays up to the whole capacity, and a subscriber that wants
    // its last events then deserializes one run, not all of them.
    for (let i = 0; i < events.length; i += RESET_RUN) {
      for (const e of events.slice(i, i + RESET_RUN)) {
        const last = this.tail[this.tail.length - 1];
        if (last !== undefined && e.seq !== last.seq + 1) this.seal();
        this.tail.push(e);
        this.held++;
      }
      this.seal();
    }
    if (this.held > this.capacity) this.trimTo(this.capacity);
  }

  private trimTo(keep: number): void {
    let drop = this.held - keep;
    while (drop > 0) {
      const c = this.chunks[this.head];
      const left = c.count - this.skip;
      if (left <= drop) {
        drop -= left;
        this.held -= left;
        this.head++;
        this.skip = 0;
      } else {
        this.skip += drop;
        this.held -= drop;
        drop = 0;
      }
    }
    // The dropped chunks' slots are reclaimed once they are half the array.
    if (this.head > 1024 && this.head * 2 > this.chunks.length) {
      this.chunks = this.chunks.slice(this.head);
      this.head = 0;
    }
  }
}
