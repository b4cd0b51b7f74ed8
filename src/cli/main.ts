/**
 * The `tokex` command line: `start` runs the stack (or one role of it), `status` reports on it,
 * `keys` administers API keys, `marketdata` maintains the simulator's data, `demo reset` returns the
 * embedded demo to its seeded state, and `stock`, `perp` and
 * `stream` trade (trade-command.ts). Only the command asked for is loaded (command-table.ts); the
 * others are listed by name and summary.
 */
import { Command } from 'commander';
import { APP_VERSION } from '../config/build-info.ts';
import { AppError } from '../errors/app-error.ts';
import { COMMANDS, requestedCommand } from './command-table.ts';

// `--debug` anywhere on the line: a failure prints its stack too. Taken out before commander
// parses, so every command accepts it.
const DEBUG = process.argv.includes('--debug') || process.env.TOKEX_DEBUG === '1';
const argv = process.argv.filter((a) => a !== '--debug');

async function main(): Promise<void> {
  const program = new Command('tokex')
    .description('tokenized-stock and perpetual trading backend')
    .option('--debug', 'on a failure, print its stack trace too (also TOKEX_DEBUG=1)')
    // The release (package.json's version), as /healthz, the metrics and the banner carry it.
    .version(APP_VERSION, '-V, --version', 'print the release of this tokex');
  const wanted = requestedCommand(argv.slice(2));
  for (const c of COMMANDS) program.addCommand(c.name === wanted ? await c.load() : new Command(c.name).description(c.summary));
  await program.parseAsync(argv);
}

main().catch((err: unknown) => {
  // One line: the message, not a stack (a missing file, a refused request, a bug alike); the stack
  // with --debug. Our own errors and the API's refusals carry no secret in their message.
  const message = err instanceof Error ? err.message : String(err);
  const expected = err instanceof AppError || isAnswer(err);
  process.stderr.write(`error: ${message}${expected || DEBUG ? '' : ' (--debug shows the stack trace)'}\n`);
  if (DEBUG && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  process.exitCode = 1;
});

/** The API's own refusals (the SDK's typed errors) are answers, not bugs. */
function isAnswer(err: unknown): boolean {
  return err instanceof Error && ['TokexApiError', 'TokexValidationError', 'StreamError', 'PerpApiError', 'StockApiError'].some((n) => err.constructor.name.startsWith(n) || err.name === n);
}
