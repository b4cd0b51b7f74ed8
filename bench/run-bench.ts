/**
 * `npm run bench`: the suites of bench/suites.ts through the one runner (bench/runner.ts), which
 * prints each suite's rows and writes them into docs/performance.md between the bench:latest
 * markers. BENCH_ONLY=<key>[,<key>…] runs some: http, indexer, executor, oneclick, upgrade,
 * perp-engine, perp-orders, scaleout (with DATABASE_URL and REDIS_URL), streams. BENCH_WRITE=off
 * leaves the document alone.
 */
import { runSuites } from './runner.ts';
import { SUITES } from './suites.ts';

await runSuites(SUITES);
