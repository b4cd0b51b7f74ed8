/** The `tokex` command line: `start` runs the stack (or one role of it), `keys` administers API keys. */
import { Command, Option } from 'commander';
import { AppError } from '../errors/app-error.ts';
import { ROLES } from '../config/app-config.ts';
import { keysCommand } from './keys-command.ts';
import { marketDataCommand } from './marketdata-command.ts';

const program = new Command('tokex').description('tokenized-stock and perpetual trading backend');

program
  .command('start')
  .description('start the embedded stack (default) or one role of it')
  .addOption(new Option('--role <role>', 'which part to run').choices([...ROLES]).default('all'))
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

program.parseAsync(process.argv).catch((err: unknown) => {
  // Only the short, secret-free message of our own errors; anything else is a bug worth a stack.
  if (err instanceof AppError) process.stderr.write(`error: ${err.message}\n`);
  else process.stderr.write(`error: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
