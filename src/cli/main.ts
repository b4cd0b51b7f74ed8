/**
 * The `tokex` command line: `start` runs the stack (or one role of it), `keys` administers API keys,
 * `marketdata` maintains the simulator's data, and `stock`, `perp` and `stream` trade (trade-command.ts).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { AppError } from '../errors/app-error.ts';
import { ROLES, type Role } from '../config/app-config.ts';
import { keysCommand } from './keys-command.ts';
import { marketDataCommand } from './marketdata-command.ts';
import { tradeCommands } from './trade-command.ts';

const program = new Command('tokex').description('tokenized-stock and perpetual trading backend');

program
  .command('start')
  .description('start the embedded stack (default), one role of it, or several (comma-separated)')
  .addOption(
    new Option('--role <roles>', `which parts to run: ${ROLES.join(', ')}; several as a,b`)
      .argParser((value): Role[] => {
        const roles = value.split(',').map((r) => r.trim());
        for (const r of roles) if (!(ROLES as readonly string[]).includes(r)) throw new InvalidArgumentError(`${r}: not a role (${ROLES.join(', ')})`);
        return roles as Role[];
      })
      .default(['all'] as Role[], 'all'),
  )
  .action(async (o) => {
    // A fresh clone has no generated ABIs until the contracts are compiled, and the stack imports
    // them: compile first (a no-op when contracts/ is unchanged), then load the stack.
    const { buildContracts } = await import('../chain/contract-build.ts');
    const build = buildContracts();
    if (build.compiled) process.stdout.write(`${build.summary}\n`);
    const { runStack } = await import('../app/run-stack.ts');
    await runStack(o.role);
  });

program.addCommand(keysCommand());
program.addCommand(marketDataCommand());
for (const c of tradeCommands()) program.addCommand(c);

program.parseAsync(process.argv).catch((err: unknown) => {
  // Only the short, secret-free message of our own errors; anything else is a bug worth a stack.
  // The API's own refusals (the SDK's typed errors) are answers, not bugs: their message only.
  const answered = err instanceof Error && ['TokexApiError', 'TokexValidationError', 'StreamError', 'PerpApiError', 'StockApiError'].some((n) => err.constructor.name.startsWith(n) || err.name === n);
  if (err instanceof AppError || answered) process.stderr.write(`error: ${err.message}\n`);
  else process.stderr.write(`error: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
