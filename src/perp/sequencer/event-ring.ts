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

export class EventRing {
  private chunks: Chunk[] = [];
  /** Index of the first chunk still held (chunks before it are dropped; compacted now and then). */
  private head = 0;
  /** Events of the head chunk trimmed away (its first `skip`). */
  private skip = 0;
  private held = 0;

  constructor(private readonly capacity: number) {}

  /** Events held. */
  get size(): number {
    return this.held;
  }

  /** Seq of the oldest event held, or undefined when none is. */
  oldestSeq(): number | undefined {
    const c = this.chunks[this.head];
    return c === undefined ? undefined : c.first + this.skip;
  }

  /** Appends events in seq order (a run of consecutive seqs; a gap starts a chunk of its own). */
  push(events: readonly EngineEvent[]): void {
    if (this.capacity === 0 || events.length === 0) return;
    let start = 0;
    for (let i = 1; i <= events.length; i++) {
      if (i === events.length || events[i].seq !== events[i - 1].seq + 1) {
        const run = start === 0 && i === events.length ? events : events.slice(start, i);
        this.chunks.push({ first: run[0].seq, count: run.length, bytes: v8.serialize(run) });
        this.held += run.length;
        start = i;
      }
    }
    if (this.held > this.capacity + Math.max(1, this.capacity >> 2)) this.trimTo(this.capacity);
  }

  /** Every event held with seq ≥ `fromSeq`, in order. */
  since(fromSeq: number): EngineEvent[] {
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
    // In runs of RESET_RUN: a restart replays up to the whole capacity, and a subscriber that wants
    // its last events then deserializes one run, not all of them.
    for (let i = 0; i < events.length; i += RESET_RUN) this.push(events.slice(i, i + RESET_RUN));
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
