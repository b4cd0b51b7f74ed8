/**
 * Seeded randomness: a small PRNG (sfc32), a standard-normal sampler, a hash of any parts to a seed,
 * and the venue's seed (`SANDBOX_SEED`, docs/sandbox.md "Determinism"). Math.random cannot be seeded,
 * and the simulator must replay the same prices from the same seed on every machine and every
 * restart; a seeded sandbox draws the values a client sees (order nonces) from its seed too.
 */

/** Hashes any parts to a 32-bit unsigned seed (murmur3-style mixing over the UTF-16 code units). */
export function seedFrom(...parts: (string | number)[]): number {
  // The separator keeps ('ab','c') and ('a','bc') apart; numbers are hashed by their decimal text.
  const text = parts.map((p) => (typeof p === 'number' ? `n${p}` : `s${p}`)).join('\u001f');
  let h = 0x9e3779b9 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    let k = Math.imul(text.charCodeAt(i), 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export interface Prng {
  /** Uniform in [0, 1) with 32 bits of randomness. */
  next(): number;
  /** Uniform 32-bit unsigned integer. */
  nextUint32(): number;
  /** Standard normal N(0, 1). */
  normal(): number;
}

/**
 * sfc32 seeded from a 32-bit value; splitmix32 spreads the seed over the 128-bit state.
 * `reseed` resets it in place: the simulator reseeds once per minute, hundreds of thousands of
 * times while it builds history, and a fresh object each time showed in the profile.
 */
export class Sfc32 implements Prng {
  private a = 0;
  private b = 0;
  private c = 0;
  private d = 0;
  private spare = 0;
  private hasSpare = false;

  constructor(seed: number) {
    this.reseed(seed);
  }

  reseed(seed: number): this {
    let s = seed >>> 0;
    const splitmix = (): number => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = splitmix();
    this.b = splitmix();
    this.c = splitmix();
    this.d = splitmix();
    this.hasSpare = false;
    // The first outputs of sfc32 still correlate with the seed.
    for (let i = 0; i < 12; i++) this.nextUint32();
    return this;
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Marsaglia's polar method: two normals per accepted pair, no trigonometry. */
  normal(): number {
    if (this.hasSpare) {
      this.hasSpare = false;
      return this.spare;
    }
    let u: number;
    let v: number;
    let s: number;
    do {
      u = 2 * this.next() - 1;
      v = 2 * this.next() - 1;
      s = u * u + v * v;
    } while (s >= 1 || s === 0);
    const f = Math.sqrt((-2 * Math.log(s)) / s);
    this.spare = v * f;
    this.hasSpare = true;
    return u * f;
  }
}

export function createPrng(seed: number): Prng {
  return new Sfc32(seed);
}

/**
 * The venue's seed (`SANDBOX_SEED`): set by the stack of a seeded sandbox before its roles start,
 * undefined otherwise. One per process, as the venue's clock is (venue-clock.ts): every role of the
 * all-in-one stack must agree on whether the venue is deterministic.
 */
let venueSeedValue: number | undefined;

/** The seed of this process's sandbox venue, undefined when it has none (behaviour as without a sandbox). */
export function venueSeed(): number | undefined {
  return venueSeedValue;
}

/** Sets the venue's seed (a whole number, 0 to 2^32 - 1), or clears it: the stack's start and stop. */
export function setVenueSeed(seed: number | undefined): void {
  if (seed !== undefined && (!Number.isSafeInteger(seed) || seed < 0 || seed > 0xffffffff)) throw new RangeError(`setVenueSeed: ${seed}: a whole number from 0 to 4294967295`);
  venueSeedValue = seed;
}

/** A 64-bit unsigned integer drawn from (seed, parts): the same parts give the same value. */
export function seededUint64(seed: number, ...parts: (string | number)[]): bigint {
  const rng = new Sfc32(seedFrom(seed, ...parts));
  return (BigInt(rng.nextUint32()) << 32n) | BigInt(rng.nextUint32());
}
