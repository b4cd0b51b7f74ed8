import { afterEach, describe, expect, it, vi } from 'vitest';
import { fields, table, withProgress } from './cli-output.ts';

const stderr = process.stderr as NodeJS.WriteStream & { isTTY?: boolean };
const wasTty = stderr.isTTY;
afterEach(() => {
  stderr.isTTY = wasTty;
  vi.restoreAllMocks();
});

function captureStderr(tty: boolean): string[] {
  stderr.isTTY = tty;
  const out: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => (out.push(String(chunk)), true));
  return out;
}

describe('withProgress', () => {
  it('shows each state the wait reports on one line of a terminal, then clears it', async () => {
    const out = captureStderr(true);
    const r = await withProgress('deposit', async (onWait) => {
      onWait('processing');
      onWait('not indexed yet');
      return 42;
    });
    expect(r).toBe(42);
    expect(out).toEqual(['\r⠋ deposit: processing   ', '\r⠙ deposit: not indexed yet   ', '\r\x1b[K']);
  });

  it('clears the line when the wait fails, and rethrows', async () => {
    const out = captureStderr(true);
    await expect(withProgress('withdrawal', async (onWait) => (onWait('SENT'), Promise.reject(new Error('still SENT'))))).rejects.toThrow('still SENT');
    expect(out.at(-1)).toBe('\r\x1b[K');
  });

  it('writes nothing when stderr is not a terminal (a pipe or a log file)', async () => {
    const out = captureStderr(false);
    await withProgress('order', async (onWait) => onWait('open'));
    expect(out).toEqual([]);
  });
});

describe('table and fields', () => {
  it('aligns columns and writes - for a missing value', () => {
    expect(table([{ a: 'x', bb: null }, { a: 'long', bb: 2 }])).toBe('a     bb\n----  --\nx     -\nlong  2');
    expect(table([])).toBe('(none)');
    expect(fields({ id: '7', status: undefined, nested: { k: 1 } })).toBe('id      7\nstatus  -\nnested  {"k":1}');
  });
});

describe('cellText (issue 41: ISO times, not Unix ms)', () => {
  it('shows ms timestamps of time fields as ISO, leaves other numbers', async () => {
    const { cellText, table } = await import('./cli-output.ts');
    expect(cellText('createdAt', 1795653014616)).toBe('2026-11-26T00:30:14.616Z');
    expect(cellText('ts', '1795653014616')).toBe('2026-11-26T00:30:14.616Z');
    expect(cellText('size', 1795653014616)).toBe('1795653014616');
    expect(cellText('updatedAt', null)).toBe('-');
    expect(cellText('deadline', 1795653014)).toBe('1795653014');
    expect(table([{ orderId: 1, createdAt: 1795653014616 }]).split('\n')).toEqual(['orderId  createdAt', '-------  ------------------------', '1        2026-11-26T00:30:14.616Z']);
  });
});

describe('issue 41: empty tables keep their header, nested rows their ISO times', () => {
  it('an empty table with columns prints its header over (none)', async () => {
    const { table } = await import('./cli-output.ts');
    expect(table([], ['symbol', 'side', 'size']).split('\n')).toEqual(['symbol  side  size', '------  ----  ----', '(none)']);
  });

  it('a nested object keeps its own time fields as ISO times', async () => {
    const { cellText } = await import('./cli-output.ts');
    expect(cellText('fills', [{ tradeId: '9', price: '95000.00', ts: 1795653014616 }])).toBe('[{"tradeId":"9","price":"95000.00","ts":"2026-11-26T00:30:14.616Z"}]');
    expect(cellText('nested', { blockNumber: 1795653014616, k: 1 })).toBe('{"blockNumber":1795653014616,"k":1}');
  });
});
