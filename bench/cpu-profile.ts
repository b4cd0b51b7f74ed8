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
