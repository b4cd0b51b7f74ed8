/**
 * The README's five-minute tour, run as written against a running stack: the signed shell requests,
 * the stream snippet, the SDK and CCXT code, and the console and reference pages it points to. The
 * code is read from README.md itself, so the tour cannot drift from what works.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/poll.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
let t: TestStack;
let work: string;

/** The section of README.md under `heading`, up to the next heading of its level or above. */
function section(heading: string): string {
  const start = README.split('\n').indexOf(heading);
  if (start < 0) throw new Error(`README has no ${heading}`);
  const lines = README.split('\n').slice(start + 1);
  const end = lines.findIndex((l) => /^#{1,2} /.test(l));
  return lines.slice(0, end < 0 ? undefined : end).join('\n');
}

/** The first fenced block of `lang` in a section, without the indentation of its fence (a block inside a list item). */
function codeBlock(heading: string, lang: string): string {
  const lines = section(heading).split('\n');
  // The fence may carry words after the language (`sh live`: readme-blocks.ts).
  const open = lines.findIndex((l) => l.trim() === '```' + lang || l.trim().startsWith('```' + lang + ' '));
  if (open < 0) throw new Error(`${heading} has no ${lang} block`);
  const indent = lines[open].length - lines[open].trimStart().length;
  const close = lines.findIndex((l, i) => i > open && l.trim() === '```');
  return lines
    .slice(open + 1, close)
    .map((l) => l.slice(indent))
    .join('\n');
}

/** Runs a README code block as a user's own file would, from a directory with `data/demo.json` and the project's packages. */
async function runUserFile(name: string, code: string): Promise<string> {
  const file = path.join(work, name);
  fs.writeFileSync(file, code);
  const { stdout } = await run(process.execPath, ['--import', 'tsx', file], { cwd: work, timeout: 60_000 });
  return stdout;
}

beforeAll(async () => {
  t = await startTestStack();
  // What a newcomer has beside the README: ./data/demo.json of the running stack and the installed packages.
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-tour-'));
  fs.mkdirSync(path.join(work, 'data'));
  fs.symlinkSync(path.join(t.dataDir, 'demo.json'), path.join(work, 'data', 'demo.json'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(work, 'node_modules'));
  // The perpetual examples need wallets[0]'s start-up deposit credited first.
  await until(async () => (await t.perpTrader!.get<{ balance: string }>('account')).balance, (b) => b !== '0');
});
afterAll(async () => {
  await t?.stop();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('README five-minute tour', () => {
  it('1. curl: the stock request signed with openssl in the shell gets a quote', async () => {
    // The same lines CI's start-up smoke test runs (.ci/readme-snippet).
    const { stdout: script } = await run(path.join(ROOT, '.ci', 'readme-snippet'), ['## A signed request from the shell']);
    expect(script).toContain('openssl dgst -sha256 -hmac');
    const { stdout } = await run('bash', ['-c', script], { env: { ...process.env, DATA_DIR: t.dataDir } });
    const body = JSON.parse(stdout);
    expect(body.code).toBe(200);
    expect(body.data.symbol).toBe('AAPL');
  });

  it('1. curl: the perpetual request with a Base64 HMAC reads the demo account and its deposit', async () => {
    const { stdout: script } = await run(path.join(ROOT, '.ci', 'readme-snippet'), ['## A signed perpetual request from the shell']);
    expect(script).toContain('-binary | base64');
    const { stdout } = await run('bash', ['-c', script], { env: { ...process.env, DATA_DIR: t.dataDir } });
    const body = JSON.parse(stdout);
    expect(body).toMatchObject({ code: 0, msg: 'ok', data: { account: t.demo.wallets[0].address.toLowerCase(), balance: '10000' } });
    expect(body.blockInfo.number).toMatch(/^\d+$/);
  });

  it('2. a stream: the node snippet prints the subscribed book, then updates', async () => {
    const script = codeBlock('## Five-minute tour', 'sh');
    expect(script).toContain('demo.perp.wsUrl');
    // As printed: from a directory with data/demo.json, no variable set beforehand.
    const { DEMO: _unset, ...env } = process.env;
    const child = spawn('bash', ['-c', script], { cwd: work, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d) => {
          out += String(d);
          const lines = out.split('\n');
          if (lines.some((l) => l.includes('"type":"subscribed"')) && lines.some((l) => l.includes('"type":"update"'))) resolve();
        });
        child.stderr.on('data', (d) => (err += String(d)));
        child.once('exit', (code) => reject(new Error(`the snippet exited with ${code}: ${err}`)));
      });
    } finally {
      // The snippet runs until Ctrl-C: stop bash and its node together.
      process.kill(-child.pid!, 'SIGTERM');
    }
    const lines = out.split('\n').filter(Boolean);
    expect(lines[0]).toMatch(/^\{"type":"subscribed","id":"b","channel":"depth","symbol":"BTC-USD","seq":\d+/);
    expect(lines.findIndex((l) => l.includes('"type":"update"'))).toBeGreaterThan(0);
  });

  it('3. the SDK: the TypeScript snippet reads a quote, candles and a balance', async () => {
    const code = codeBlock('## The same from TypeScript', 'ts');
    const [symbol, bid, ask, candles, available] = (await runUserFile('sdk-tour.mts', code)).trim().split(' ');
    expect(symbol).toBe('AAPL');
    expect(Number(ask)).toBeGreaterThanOrEqual(Number(bid));
    expect(Number(candles)).toBeGreaterThan(0);
    expect(available).toMatch(/^\d+(\.\d+)?$/);
  });

  it('4 and 6. the console and both reference pages answer at the URLs the tour gives', async () => {
    const tour = section('## Five-minute tour');
    const links = [...tour.matchAll(/http:\/\/127\.0\.0\.1:(8080|8090)(\/[\w/]*)/g)];
    expect(links.map((m) => m[0])).toEqual(['http://127.0.0.1:8080/console', 'http://127.0.0.1:8080/docs', 'http://127.0.0.1:8090/docs']);
    for (const [, port, pathname] of links) {
      const base = port === '8080' ? t.demo.stock.baseUrl : t.perpBaseUrl!;
      const res = await fetch(new URL(pathname, base));
      expect(res.status, pathname).toBe(200);
      expect(res.headers.get('content-type'), pathname).toMatch(/^text\/html/);
    }
  });

  it('5. CCXT: the snippet places a resting order, cancels it and watches the book', async () => {
    const code = codeBlock('## CCXT', 'js');
    const out = (await runUserFile('ccxt-tour.mjs', code)).trim();
    const m = /^(\w+) (\w+) best bid ([\d.]+) best ask ([\d.]+)$/.exec(out);
    expect(m, out).not.toBeNull();
    const [, placed, canceled, bid, ask] = m!;
    expect([placed, canceled]).toEqual(['open', 'canceled']);
    expect(Number(ask)).toBeGreaterThan(Number(bid));
  });
});
