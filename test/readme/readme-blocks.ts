/**
 * The code blocks of README.md, in order, as test/readme/readme-walkthrough.test.ts runs them.
 *
 * The rule, kept to what a reader sees in the file:
 * - A ```sh block runs in a real `bash`, exactly as printed, in the project's directory, after the
 *   blocks above it, and must exit 0 (bash -e: a line that fails fails the block).
 * - A line `npm start` (or `npm install && npm start`, a comment after it allowed) is the stack
 *   the reader runs in another terminal: the test starts it there, in the background, and waits for
 *   its banner (`Ctrl-C to stop`); when it is already running the line is a reminder and nothing runs.
 *   `npm install` is what the test itself runs under.
 * - Words after `sh` in the fence (GitHub shows only the language):
 *   - `live`: the block runs until Ctrl-C (a stream): the test waits for its first three lines
 *     of output, then sends it Ctrl-C (SIGINT to its process group);
 *   - `stopped`: the block runs with the stack stopped, as after Ctrl-C in its terminal (the test
 *     stops it first; an `npm start` line in the block starts it again);
 *   - `not-run`: not run: a command's forms with placeholders (`<apiKey>`, `0x…`), a file the reader
 *     brings (`aapl.csv`), what takes minutes or needs a chain of one's own (`npm test`,
 *     `tokex upgrade --apply`), or a stack started otherwise than the walkthrough's (`--chain 31338`
 *     needs two chains, `EMBEDDED_CHAIN_IDS`: test/cli/cli-chains.test.ts runs those commands).
 * - A ```ts or ```js block runs as the README tells a reader to: saved as a file of its own in the
 *   project's directory (`.mts` / `.mjs`) and run with `npx tsx <file>`, with the stack running.
 */
export type BlockMode = 'run' | 'live' | 'stopped' | 'not-run';

export interface ReadmeBlock {
  /** 0-based position among the blocks this file lists (sh, ts, js). */
  index: number;
  /** The `#`/`##`/`###` heading the block is under. */
  heading: string;
  /** 1-based line of the opening fence in README.md. */
  line: number;
  lang: 'sh' | 'ts' | 'js';
  mode: BlockMode;
  /** The block's text without the indentation of its fence (a block inside a list item). */
  code: string;
}

const FENCE = /^(\s*)```(\S*)(?:[ \t]+(.*))?$/;
const MODES: readonly BlockMode[] = ['live', 'stopped', 'not-run'];

export function readmeBlocks(readme: string): ReadmeBlock[] {
  const lines = readme.split('\n');
  const blocks: ReadmeBlock[] = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const h = /^(#{1,3}) (.*)$/.exec(lines[i]);
    if (h) heading = lines[i];
    const m = FENCE.exec(lines[i]);
    if (!m) continue;
    const indent = m[1].length;
    let close = i + 1;
    while (close < lines.length && lines[close].trim() !== '```') close++;
    const lang = m[2] === 'bash' ? 'sh' : m[2];
    const words = (m[3] ?? '').trim().split(/\s+/).filter(Boolean);
    if (lang === 'sh' || lang === 'ts' || lang === 'js') {
      const unknown = words.filter((w) => !(MODES as readonly string[]).includes(w));
      if (unknown.length > 0) throw new Error(`README.md:${i + 1}: unknown fence word ${unknown.join(' ')} (known: ${MODES.join(', ')})`);
      blocks.push({
        index: blocks.length,
        heading,
        line: i + 1,
        lang,
        mode: (words[0] as BlockMode | undefined) ?? 'run',
        code: lines
          .slice(i + 1, close)
          .map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)))
          .join('\n'),
      });
    }
    i = close;
  }
  return blocks;
}

/** A line that starts the stack: `npm start` or `npm install && npm start`, with a comment or not. */
export const STARTS_STACK = /^\s*(?:npm install\s*&&\s*)?npm start\s*(?:#.*)?$/;

/**
 * The block cut at its `npm start` lines: the pieces of script between them, each followed by
 * whether the stack starts after it.
 */
export function segments(code: string): Array<{ script: string; startsStackAfter: boolean }> {
  const out: Array<{ script: string; startsStackAfter: boolean }> = [];
  let current: string[] = [];
  for (const line of code.split('\n')) {
    if (STARTS_STACK.test(line)) {
      out.push({ script: current.join('\n'), startsStackAfter: true });
      current = [];
    } else current.push(line);
  }
  out.push({ script: current.join('\n'), startsStackAfter: false });
  return out;
}
