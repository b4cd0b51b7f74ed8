/**
 * What a perp server's orders leave on its heap (issue 40, docs/performance.md "the tail's
 * collections"): a fresh one-process server of the perp orders bench takes 12,000 signed orders
 * (single REST, or place frames over the WebSocket), a heap snapshot is written, 12,000 more, a
 * second snapshot; compare them with bench/heap-diff.ts.
 *
 *   npx tsx bench/perp-heap-growth.ts single|ws [dir]    (default dir bench-profiles/heap-growth)
 *   npx tsx bench/heap-diff.ts <dir>/single-a.heapsnapshot <dir>/single-b.heapsnapshot
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { makeWallets, signOrders, startChild, stopChild, sendOrders, sendFrames, type ServerChild } from './perp-orders-bench.ts';

const kind = process.argv[2] ?? 'single';
if (kind !== 'single' && kind !== 'ws') throw new Error('perp-heap-growth: single or ws');
const out = path.resolve(process.argv[3] ?? 'bench-profiles/heap-growth');
fs.mkdirSync(out, { recursive: true });
const wallets = makeWallets(16);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-heap-'));
const master = randomBytes(32).toString('hex');
const server: ServerChild = await startChild(['server', path.join(dir, 'x.sqlite'), '-', ...wallets.map((w) => w.address)], master, kind === 'ws' ? { BENCH_PERP_WS: 'on' } : {});

/** The server writes a snapshot (it collects garbage first) and answers its path. */
function snapshot(file: string): Promise<string> {
  return new Promise((resolve) => {
    const on = (m: { heapSnapshot?: string }) => {
      if (m?.heapSnapshot) {
        server.child.off('message', on);
        resolve(m.heapSnapshot);
      }
    };
    server.child.on('message', on);
    server.child.send({ heapSnapshot: path.join(out, file) });
  });
}

let nonce = 1;
async function send(n: number): Promise<void> {
  const list = await signOrders(wallets, n, nonce);
  nonce += n;
  if (kind === 'single') await sendOrders(list, server.ready.url, server.ready.keys, 32);
  else await sendFrames(list, server.ready.wsUrl!, server.ready.keys, 16, 32, 8);
}

try {
  await send(12_000);
  console.log(await snapshot(`${kind}-a.heapsnapshot`));
  await send(12_000);
  console.log(await snapshot(`${kind}-b.heapsnapshot`));
} finally {
  await stopChild(server.child);
  fs.rmSync(dir, { recursive: true, force: true });
}
