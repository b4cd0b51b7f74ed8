/** The seeded PRNG moved to src/lib/seeded-random.ts (the perpetual venue draws from it too); its names, as before. */
export { createPrng, seedFrom, Sfc32, type Prng } from '../lib/seeded-random.ts';
