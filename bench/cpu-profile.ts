/**
 * A V8 CPU profile of a window of this process (BENCH_CPU_PROF=1): the bench starts it right
 * before what it measures and writes it right after, so startup and the TypeScript loader stay out.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';

export interface CpuProfile {
  /** Stops sampling and writes the profile to `file` (a .cpuprofile for Chrome DevTools). */
  stop(file: string): Promise<void>;
}

export async function startCpuProfile(): Promise<CpuProfile> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return {
    async stop(file) {
      const { profile } = await session.post('Profiler.stop');
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/**
 * V8's sampling heap profiler over a window of this process (BENCH_PERP_HEAP=1 with
 * BENCH_PERP_PROF): every allocation site's bytes, counting what young and old collections took
 * as well as what survived, so the profile answers "what does an order allocate", not "what does it
 * keep". Written as a .heapprofile (Chrome DevTools; bench/heap-sampling-summary.ts).
 */
export async function startHeapSampling(): Promise<CpuProfile> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  // Flags V8 11 reads (Node 20); an older V8 ignores them and counts only the survivors.
  await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
  return {
    async stop(file) {
      const { profile } = await session.post('HeapProfiler.stopSampling');
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file.replace(/\.cpuprofile$/, '.heapprofile'), JSON.stringify(profile));
      session.disconnect();
    },
  };
}
