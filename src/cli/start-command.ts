/** `tokex start`: the embedded stack (default), one role of it, or several. */
import { Command, InvalidArgumentError, Option } from 'commander';
import { ROLES, type Role } from '../config/app-config.ts';

export function startCommand(): Command {
  return new Command('start')
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
    .addOption(
      new Option('--chain <ids>', 'run the per-chain roles (indexer, executor, relayer) of these chains only, several as a,b (default: every chain served)').argParser((value): number[] => {
        const ids = value.split(',').map((part) => part.trim());
        for (const id of ids) if (!/^\d{1,15}$/.test(id) || Number(id) < 1) throw new InvalidArgumentError(`${id}: not a chain id (a positive integer)`);
        return [...new Set(ids.map(Number))];
      }),
    )
    .action(async (o) => {
      // A fresh clone has no generated ABIs until the contracts are compiled, and the stack imports
      // them: compile first (a no-op when contracts/ is unchanged), then load the stack.
      const { buildContracts } = await import('../chain/contract-build.ts');
      const build = buildContracts();
      if (build.compiled) process.stdout.write(`${build.summary}\n`);
      const { runStack } = await import('../app/run-stack.ts');
      await runStack(o.role, o.chain);
    });
}
