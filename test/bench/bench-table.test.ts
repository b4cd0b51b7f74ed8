/**
 * The bench's table in docs/performance.md (bench/runner.ts mergeTable): a run replaces the rows of
 * the suites it ran and keeps the others, and writing the table again and again leaves exactly one
 * header and one separator row (the separator was once kept as a suite named `---`, one more a run).
 */
import { describe, expect, it } from 'vitest';
import { END, mergeTable, START } from '../../bench/runner.ts';

const doc = (rows: string[]) => ['# Perf', START, 'Last run x', '', '| suite | figure | value | baseline (same run) | ratio | target | measured |', '| --- | --- | ---: | --- | ---: | --- | --- |', ...rows, END, 'after'].join('\n');

describe('the bench table', () => {
  it('replaces the rows of the suites run, keeps the others in order, and keeps one separator however often written', () => {
    let text = doc(['| http | a | 1 µs |  |  |  | old |', '| streams | b | 2 µs |  |  |  | old |']);
    for (let run = 0; run < 3; run++) {
      text = mergeTable(text, ['http', 'streams'], new Set(['http']), new Map([['http', [`| http | a | ${run} µs |  |  |  | new |`]]]), `Last run ${run}`);
    }
    const block = text.slice(text.indexOf(START) + START.length, text.indexOf(END)).trim().split('\n');
    expect(block).toEqual([
      'Last run 2',
      '',
      '| suite | figure | value | baseline (same run) | ratio | target | measured |',
      '| --- | --- | ---: | --- | ---: | --- | --- |',
      '| http | a | 2 µs |  |  |  | new |',
      '| streams | b | 2 µs |  |  |  | old |',
    ]);
    expect(text.endsWith(`${END}\nafter`)).toBe(true);
  });
});
