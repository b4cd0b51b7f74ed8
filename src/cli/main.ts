/**
 * The `tokex` command line: `start` runs the stack (or one role of it), `status` reports on it,
 * `keys` administers API keys, `marketdata` maintains the simulator's data, and `stock`, `perp` and
 * `stream` trade (trade-command.ts). Only the command asked for is loaded (command-table.ts); the
 * others are listed by name and summary.
 */
import { Command } from 'commander';
import { APP_VERSION } from '../config/build-info.ts';
import { AppError } from '../errors/app-error.ts';
import { COMMANDS, requestedCommand } from './command-table.ts';

async function main(): Promise<void> {
  const program = new Command('tokex')
    .description('tokenized-stock and perpetual trading backend')
    // The release (package.json's version), as /healthz, the metrics and the banner carry it.
    .version(APP_VERSION, '-V, --version', 'print the release of this tokex');
  const wanted = requestedCommand(process.argv.slice(2));
  for (const c of COMMANDS) program.addCommand(c.name === wanted ? await c.load() : new Command(c.name).description(c.summary));
  await program.parseAsync(process.argv);
}

main().catch((err: unknown) => {
  // Only the short, secret-free message of our own errors; anything else is a bug worth a stack.
  // The API's own refusals (the SDK's typed errors) are answers, not bugs: their message only.
  const answered = err instanceof Error && ['TokexApiError', 'TokexValidationError', 'StreamError', 'PerpApiError', 'StockApiError'].some((n) => err.constructor.name.startsWith(n) || err.name === n);
  if (err instanceof AppError || answered) process.stderr.write(`error: ${err.message}\n`);
  else process.stderr.write(`error: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
