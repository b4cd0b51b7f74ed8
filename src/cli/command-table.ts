/**
 * The top-level commands of `tokex`, each with the one-line summary `tokex --help` shows and the
 * module that defines it. A command's module (and with it viem, the SDK, the database, the stack)
 * is loaded only when that command runs, so `tokex --help` and a mistyped command answer at once.
 * A new top-level command goes here; command-table.test.ts checks each summary against the
 * description its module gives.
 */
import type { Command } from 'commander';

export interface TopCommand {
  name: string;
  summary: string;
  load(): Promise<Command>;
}

async function tradeCommand(name: string): Promise<Command> {
  const { tradeCommands } = await import('./trade-command.ts');
  return tradeCommands().find((c) => c.name() === name)!;
}

export const COMMANDS: readonly TopCommand[] = [
  {
    name: 'start',
    summary: 'start the embedded stack (default), one role of it, or several (comma-separated)',
    load: async () => (await import('./start-command.ts')).startCommand(),
  },
  { name: 'status', summary: 'the roles of the running stack: state, last progress, age and lease holder', load: async () => (await import('./status-command.ts')).statusCommand() },
  { name: 'keys', summary: 'manage API keys of the stock and perp APIs', load: async () => (await import('./keys-command.ts')).keysCommand() },
  { name: 'marketdata', summary: 'market-data maintenance', load: async () => (await import('./marketdata-command.ts')).marketDataCommand() },
  {
    name: 'corporate-actions',
    summary: 'schedule and list splits and dividends (dividends are paid on chain at their ex-date)',
    load: async () => (await import('./corporate-actions-command.ts')).corporateActionsCommand(),
  },
  {
    name: 'upgrade',
    summary: 'what this release needs to upgrade the contracts and the database in place (a dry run), or --apply it',
    load: async () => (await import('./upgrade-command.ts')).upgradeCommand(),
  },
  { name: 'demo', summary: 'the embedded demo: `demo reset` returns it to its seeded state', load: async () => (await import('./demo-command.ts')).demoCommand() },
  { name: 'stock', summary: 'the tokenized-stock API: quotes, balances, orders, cash', load: () => tradeCommand('stock') },
  { name: 'perp', summary: 'the perpetual API: account, positions, signed orders, collateral', load: () => tradeCommand('perp') },
  { name: 'stream', summary: 'a stream live in the terminal (Ctrl-C to stop); the stock streams take --chain <id>', load: () => tradeCommand('stream') },
];

/** The top-level command `args` (process.argv without node and the script) names, if any. */
export function requestedCommand(args: readonly string[]): string | undefined {
  const operands = args.filter((a) => !a.startsWith('-'));
  // `tokex help stock` shows the help of stock, which needs its definition.
  return operands[0] === 'help' ? operands[1] : operands[0];
}
