import { describe, expect, it } from 'vitest';
import { COMMANDS, requestedCommand } from './command-table.ts';

describe('command table', () => {
  it('lists each command with the description its module gives it', async () => {
    for (const c of COMMANDS) {
      const cmd = await c.load();
      expect(cmd.name()).toBe(c.name);
      expect(cmd.description()).toBe(c.summary);
    }
  });

  it('finds the command a command line names, through help and options', () => {
    expect(requestedCommand(['--help'])).toBeUndefined();
    expect(requestedCommand([])).toBeUndefined();
    expect(requestedCommand(['stock', 'quote', 'AAPL', '--json'])).toBe('stock');
    expect(requestedCommand(['--help', 'perp'])).toBe('perp');
    expect(requestedCommand(['help', 'keys'])).toBe('keys');
    expect(requestedCommand(['start', '--role', 'marketdata'])).toBe('start');
  });
});
