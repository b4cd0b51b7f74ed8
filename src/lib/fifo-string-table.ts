/**
 * A table of string keys, each with a number and optionally a text, in insertion order, removed
 * from the front: the shape of the sequencer's recent answers (command id → journal seq and answer
 * text).
 *
 * Why not a Map: it holds 100,000 entries for minutes, so every entry
 * lives long enough to be promoted to V8's old space, and once the table is full each new entry
 * pushes out one that dies there. At the order rate that fills old space with garbage, and the full
 * collections that clear it were the tail of the order latency (docs/performance.md, "the tail's
 * collections"). Here the keys and texts are UTF-8 bytes in large buffers outside the JS heap, and
 * the index is typed arrays: an entry allocates nothing that outlives the call that adds it.
 *
 * Layout: entries sit in a ring of typed arrays (grown by doubling, re-linearised); an open
 * addressing hash table (linear probing, deletion by backward shift, load ≤ 1/2) maps a key's hash
 * to its ring position; a hit is confirmed by comparing the key's bytes, so a hash collision never
 * answers for another key. Bytes go into chunks of `chunkBytes`, appended in entry order; a chunk is
 * dropped once every entry in it has left the front. Keys are compared as UTF-8, which cannot carry
 * an unpaired surrogate (each becomes U+FFFD): two keys differing only there are told apart by
 * their hashes alone. The caller's keys are ASCII command ids.
 */

const EMPTY = 0;
const NO_TEXT = -1;

/** FNV-1a over UTF-16 code units: cheap, and the byte comparison settles collisions. */
function hashKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}

export interface FifoStringTableOptions {
  /** Ring slots to start with (rounded up to a power of two). */
  initialCapacity?: number;
  /** Bytes a chunk holds; an entry larger than this gets a chunk of its own. */
  chunkBytes?: number;
}

export class FifoStringTable {
  // The ring: positions head .. head + count - 1 (mod capacity) are in use, oldest first.
  private capacity: number;
  private head = 0;
  private count = 0;
  private nums: Float64Array;
  private hashes: Int32Array;
  /** Absolute chunk number of the entry's bytes (key, then text). */
  private chunkOf: Int32Array;
  private offsets: Int32Array;
  private keyLens: Int32Array;
  private textLens: Int32Array;

  // The hash table: ring position + 1, EMPTY for none.
  private slots: Int32Array;
  private mask: number;

  private readonly chunkBytes: number;
  private chunks: Buffer[] = [];
  /** Entries in the ring whose bytes are in each chunk (dropped at 0, from the front). */
  private chunkEntries: number[] = [];
  /** Absolute number of chunks[0]. */
  private chunkBase = 0;
  /** Write offset in the last chunk. */
  private writeAt = 0;
  private scratch = Buffer.allocUnsafeSlow(256);

  constructor(opts: FifoStringTableOptions = {}) {
    let cap = 16;
    while (cap < (opts.initialCapacity ?? 1_024)) cap *= 2;
    this.capacity = cap;
    this.nums = new Float64Array(cap);
    this.hashes = new Int32Array(cap);
    this.chunkOf = new Int32Array(cap);
    this.offsets = new Int32Array(cap);
    this.keyLens = new Int32Array(cap);
    this.textLens = new Int32Array(cap);
    this.slots = new Int32Array(cap * 2);
    this.mask = cap * 2 - 1;
    this.chunkBytes = Math.max(1_024, opts.chunkBytes ?? 1 << 20);
  }

  /** Entries held. */
  get size(): number {
    return this.count;
  }

  /** Bytes of the chunks held (outside the JS heap). */
  get bytesHeld(): number {
    let n = 0;
    for (const c of this.chunks) n += c.length;
    return n;
  }

  /** The entry's handle, or -1 when the key is not held. Valid until the table next changes. */
  find(key: string): number {
    const h = hashKey(key);
    let keyBytes = -1;
    for (let i = h & this.mask; ; i = (i + 1) & this.mask) {
      const s = this.slots[i]!;
      if (s === EMPTY) return -1;
      const pos = s - 1;
      if (this.hashes[pos] !== h) continue;
      if (keyBytes < 0) keyBytes = this.writeScratch(key);
      const chunk = this.chunks[this.chunkOf[pos]! - this.chunkBase]!;
      const off = this.offsets[pos]!;
      if (this.keyLens[pos] === keyBytes && chunk.compare(this.scratch, 0, keyBytes, off, off + keyBytes) === 0) return pos;
    }
  }

  /** The number stored with the entry. */
  numberAt(handle: number): number {
    return this.nums[handle]!;
  }

  /** The text stored with the entry, undefined when it was added without one. */
  textAt(handle: number): string | undefined {
    const len = this.textLens[handle]!;
    if (len === NO_TEXT) return undefined;
    const chunk = this.chunks[this.chunkOf[handle]! - this.chunkBase]!;
    const start = this.offsets[handle]! + this.keyLens[handle]!;
    return chunk.toString('utf8', start, start + len);
  }

  /**
   * Adds an entry at the back. The caller makes sure the key is not held (find first): a second
   * entry for one key would hide behind the first until the first leaves.
   */
  push(key: string, num: number, text?: string): void {
    if (this.count === this.capacity) this.grow();
    // A UTF-16 code unit is at most 3 bytes of UTF-8: room for that bound, so the strings are
    // encoded once (the write tells their length) instead of measured first.
    const bound = 3 * (key.length + (text === undefined ? 0 : text.length));
    if (this.chunks.length === 0 || this.writeAt + bound > this.chunks[this.chunks.length - 1]!.length) {
      this.chunks.push(Buffer.allocUnsafeSlow(Math.max(this.chunkBytes, bound)));
      this.chunkEntries.push(0);
      this.writeAt = 0;
    }
    const last = this.chunks.length - 1;
    const chunk = this.chunks[last]!;
    const off = this.writeAt;
    const keyBytes = chunk.write(key, off, 'utf8');
    const textBytes = text === undefined ? 0 : chunk.write(text, off + keyBytes, 'utf8');
    this.writeAt = off + keyBytes + textBytes;
    this.chunkEntries[last]!++;

    const pos = (this.head + this.count) & (this.capacity - 1);
    const h = hashKey(key);
    this.nums[pos] = num;
    this.hashes[pos] = h;
    this.chunkOf[pos] = this.chunkBase + last;
    this.offsets[pos] = off;
    this.keyLens[pos] = keyBytes;
    this.textLens[pos] = text === undefined ? NO_TEXT : textBytes;
    this.count++;
    this.insertSlot(h, pos);
  }

  /** The number of the oldest entry, undefined when empty. */
  oldestNumber(): number | undefined {
    return this.count === 0 ? undefined : this.nums[this.head]!;
  }

  /** Removes the oldest entry; false when empty. */
  shift(): boolean {
    if (this.count === 0) return false;
    this.deleteSlot(this.head);
    this.dropFront();
    return true;
  }

  clear(): void {
    this.head = 0;
    this.count = 0;
    this.slots.fill(EMPTY);
    this.chunks = [];
    this.chunkEntries = [];
    this.chunkBase = 0;
    this.writeAt = 0;
  }

  /** Takes the front position out of the ring (already out of the hash table) and frees its chunk when it was the chunk's last. */
  private dropFront(): void {
    const c = this.chunkOf[this.head]! - this.chunkBase;
    this.head = (this.head + 1) & (this.capacity - 1);
    this.count--;
    this.chunkEntries[c]!--;
    // Chunks empty from the front go; the last chunk stays to be written on, unless the ring is empty.
    while (this.chunkEntries.length > 0 && this.chunkEntries[0] === 0 && (this.chunks.length > 1 || this.count === 0)) {
      this.chunks.shift();
      this.chunkEntries.shift();
      this.chunkBase++;
      if (this.chunks.length === 0) this.writeAt = 0;
    }
  }

  private insertSlot(h: number, pos: number): void {
    let i = h & this.mask;
    while (this.slots[i] !== EMPTY) i = (i + 1) & this.mask;
    this.slots[i] = pos + 1;
  }

  /** Deletes the hash table's slot of ring position `pos`, shifting later probes back (no tombstones). */
  private deleteSlot(pos: number): void {
    const mask = this.mask;
    let i = this.hashes[pos]! & mask;
    while (this.slots[i] !== pos + 1) i = (i + 1) & mask;
    let j = i;
    for (;;) {
      this.slots[i] = EMPTY;
      for (;;) {
        j = (j + 1) & mask;
        const s = this.slots[j]!;
        if (s === EMPTY) return;
        const home = this.hashes[s - 1]! & mask;
        // The entry at j may move to i only if its home is not cyclically inside (i, j].
        const inside = i <= j ? i < home && home <= j : i < home || home <= j;
        if (!inside) break;
      }
      this.slots[i] = this.slots[j]!;
      i = j;
    }
  }

  /** Doubles the ring, re-linearising it from position 0, and rebuilds the hash table. */
  private grow(): void {
    const cap = this.capacity * 2;
    const old = this.capacity;
    const order = (a: Int32Array | Float64Array, b: Int32Array | Float64Array): void => {
      for (let k = 0; k < this.count; k++) b[k] = a[(this.head + k) & (old - 1)]!;
    };
    const nums = new Float64Array(cap);
    const hashes = new Int32Array(cap);
    const chunkOf = new Int32Array(cap);
    const offsets = new Int32Array(cap);
    const keyLens = new Int32Array(cap);
    const textLens = new Int32Array(cap);
    order(this.nums, nums);
    order(this.hashes, hashes);
    order(this.chunkOf, chunkOf);
    order(this.offsets, offsets);
    order(this.keyLens, keyLens);
    order(this.textLens, textLens);
    this.nums = nums;
    this.hashes = hashes;
    this.chunkOf = chunkOf;
    this.offsets = offsets;
    this.keyLens = keyLens;
    this.textLens = textLens;
    this.capacity = cap;
    this.head = 0;
    this.slots = new Int32Array(cap * 2);
    this.mask = cap * 2 - 1;
    for (let k = 0; k < this.count; k++) this.insertSlot(hashes[k]!, k);
  }

  private writeScratch(key: string): number {
    const n = Buffer.byteLength(key);
    if (n > this.scratch.length) this.scratch = Buffer.allocUnsafeSlow(Math.max(n, this.scratch.length * 2));
    return this.scratch.write(key, 0, n, 'utf8');
  }
}
