/** `npm run build:contracts` (and npm's `prepare` on install): compiles contracts/ when it changed. */
import { buildContracts } from '../src/chain/contract-build.ts';

try {
  const result = buildContracts();
  for (const w of result.warnings) process.stderr.write(`${w}\n`);
  process.stdout.write(`${result.summary}\n`);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
