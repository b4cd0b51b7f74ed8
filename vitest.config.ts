import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The wire contract from its sources, as tsconfig.json's `paths` give it to tsc, tsx and esbuild:
  // a change there is seen without rebuilding the package.
  resolve: { alias: { '@tokex/contract': fileURLToPath(new URL('./packages/contract/src/index.ts', import.meta.url)) } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'packages/testkit/test/**/*.test.ts', 'examples/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 240_000,
    pool: 'forks',
    // Three on these 2-core machines: most files wait on anvil's blocks, child processes and
    // timers, and with two workers the cores were busy 61 % of the run. The full suite (PostgreSQL
    // and Redis, 27 November) took 722 s with three workers against 877 s with two an hour before,
    // the cores busy 77 %, every test passing.
    maxWorkers: 3,
    // Files share their worker's module cache instead of each importing viem, Fastify and the stack
    // anew: imports took 197 s of an 833 s run, 24 s without isolation. It holds because no test
    // mocks a module or fakes the global clock, and each file stops what it starts; keep it so.
    isolate: false,
    // Stacks and role processes started by tests serve their metrics on a free port each, never
    // 9464: two workers and many stacks run at once (docs/operations.md).
    env: { METRICS_PORT: '0' },
    // After each file, the data directories its test stacks were made (test/support/made-data-dirs.ts).
    setupFiles: ['test/support/remove-made-data-dirs.ts'],
  },
});
