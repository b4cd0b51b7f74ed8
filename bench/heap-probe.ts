/**
 * What a stock API process serving two chains holds that one serving one chain does not:
 * `npx tsx bench/heap-probe.ts [dir]`. A stack of two embedded chains; beside it one API process
 * serving the first chain and one serving both, each warmed with the same signed price requests for
 * the first chain; then a heap snapshot of each in `dir` (default bench-profiles/heap), compared by
 * constructor with bench/heap-diff.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { StockClient } from '@tokex/sdk';
import { startBenchServer, stopServers, type Server } from './bench-children.ts';

const dir = process.argv[2] ?? 'bench-profiles/heap';
fs.mkdirSync(dir, { recursive: true });

function snapshot(s: Server, file: string): Promise<string> {
  return new Promise((resolve) => {
    const onMsg = (m: any) => {
      if (m?.heapSnapshot) {
        s.child.off('message', onMsg);
        resolve(m.heapSnapshot);
      }
    };
    s.child.on('message', onMsg);
    s.child.send({ heapSnapshot: path.resolve(file) });
  });
}

async function load(s: Server, key: { apiKey: string; apiSecret: string; chainId: number }, count: number): Promise<void> {
  const client = new StockClient({ baseUrl: s.url, ...key });
  const signed = Array.from({ length: count }, () => {
    const r = client.sign('GET', '/api/v1/prices/AAPL');
    const u = new URL(r.url);
    return { method: 'GET' as const, path: u.pathname + u.search, headers: r.headers };
  });
  let next = 0;
  await autocannon({ url: s.url, connections: 16, amount: count, requests: [{ method: 'GET', setupRequest: (req: any) => ({ ...req, ...signed[next++ % signed.length] }) }] });
}

const stack = await startBenchServer('stack', { EMBEDDED_CHAIN_IDS: '31337,31338', CHAIN_ID: '31337' });
const servers: Server[] = [];
try {
  const demo = stack.demo!;
  const second = demo.stock.chains.find((c) => c.chainId !== demo.chainId)!;
  const oneEnv = { DATA_DIR: stack.dataDir!, RPC_URL: stack.rpcUrl! };
  const one = await startBenchServer('api', oneEnv);
  const two = await startBenchServer('api', { ...oneEnv, STOCK_CHAINS: `${demo.chainId},${second.chainId}`, [`RPC_URL_${second.chainId}`]: second.rpcUrl });
  servers.push(one, two);
  const key = { apiKey: demo.stock.keys.readOnly.apiKey, apiSecret: demo.stock.keys.readOnly.apiSecret, chainId: demo.chainId };
  const count = Number(process.env.HEAP_PROBE_REQUESTS ?? 20_000);
  const gc = (s: Server) =>
    new Promise<any>((resolve) => {
      const onMsg = (m: any) => {
        if (m?.gc) {
          s.child.off('message', onMsg);
          resolve(m);
        }
      };
      s.child.on('message', onMsg);
      s.child.send('gc');
    });
  for (const s of [one, two]) await load(s, key, count);
  // Then the same load again on each, its collections and heap read around it.
  for (const [name, s] of [['one', one], ['two', two]] as const) {
    const sample = (msg: object) =>
      new Promise<void>((resolve) => {
        const onMsg = (m: any) => {
          if (m?.heapSampling) {
            s.child.off('message', onMsg);
            resolve();
          }
        };
        s.child.on('message', onMsg);
        s.child.send({ heapSample: msg });
      });
    const before = await gc(s);
    await sample({ start: true });
    await load(s, key, count);
    await sample({ file: path.resolve(dir, `${name}.heapprofile`) });
    const after = await gc(s);
    const per = (k: string) => `${after.gc[k]?.count - (before.gc[k]?.count ?? 0)} × ${((after.gc[k]?.ms - (before.gc[k]?.ms ?? 0)) / Math.max(1, after.gc[k]?.count - (before.gc[k]?.count ?? 0))).toFixed(2)} ms`;
    console.log(name, 'minor', per('minor'), 'major', per('major'));
    console.log(name, 'spaces', after.heap.map((h: any) => `${h.space} ${(h.used / 2 ** 20).toFixed(1)}/${(h.size / 2 ** 20).toFixed(1)}`).join(', '));
    console.log(name, 'stats', JSON.stringify(after.stats));
  }
  // Snapshots taken while the load runs: what a process holds on to mid-flight.
  for (const [name, s] of [['one', one], ['two', two]] as const) {
    const running = load(s, key, count);
    await new Promise((r) => setTimeout(r, 2_000));
    console.log(`${name}:`, await snapshot(s, path.join(dir, `${name}.heapsnapshot`)));
    await running;
  }
} finally {
  await stopServers(servers);
  await stopServers([stack]);
}
