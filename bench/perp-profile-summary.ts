/**
 * Where a signed order's time goes: reads the CPU profiles `BENCH_PERP_PROF=<dir>` leaves (one per
 * measured run of bench/perp-orders-bench.ts: `rest-order`, `floor`, `batch-orders`, `ws-orders`,
 * each with its order count in `<name>.orders` and, for the venue's servers, its SQLite time by
 * purpose in `<name>.sql.json`) and prints µs per order by part of the path.
 *
 * Each sample goes to the innermost frame of its stack that belongs to a part of the path (the
 * HMAC check, the typed message's parsing, the EIP-712 digest, recovery, the nonce claim, the
 * engine, the journal, the projector, serialisation, logging, ...). Frames that serve every part
 * (Kysely and better-sqlite3, Fastify and Node's HTTP, the microtask queue) decide only when no such
 * frame is on the stack. SQLite's share cannot be split by stack (its statements run after an
 * `await`, from the microtask queue): it is split by the timed calls in `<name>.sql.json`, the
 * driver's JavaScript around them in proportion to each purpose's statements.
 *
 * Times are the sampled main thread's, in the profiled run (the profiler adds a few per cent);
 * `(idle)` is the loop waiting, not CPU, and is left out of the total.
 *
 *   npx tsx bench/perp-profile-summary.ts <dir> [name ...]
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SqlPurpose, SqlTotals } from './sqlite-timing.ts';

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

type Rule = [category: string, test: (url: string, fn: string) => boolean];

const has = (...parts: string[]) => (url: string) => parts.some((p) => url.includes(p));

/** Parts of the path, checked on each frame from the leaf up: the first frame that matches decides. */
const SEMANTIC: Rule[] = [
  ['profiler', (u) => has('node:inspector', 'bench/cpu-profile.ts')(u)],
  ['EIP-712 signature recovery (libsecp256k1)', (u, f) => has('chain/signature-recovery.ts', 'node_modules/secp256k1/')(u) || (u.endsWith('chain/typed-data.ts') && /^(parseSignature|recoverDigestSigner)$/.test(f))],
  ['typed message parsing and checks', (u, f) => (u.endsWith('chain/typed-data.ts') && /^(read|readAtomic|parseMessage)$/.test(f)) || has('packages/contract/src/')(u)],
  ['EIP-712 digest (Keccak)', (u) => has('chain/keccak.ts', 'node_modules/hash-wasm/', 'wasm://', 'chain/typed-data.ts')(u)],
  ['JSON body parsing and schema validation', (u, f) => has('http/request-decoder.ts', 'node_modules/ajv', 'secure-json-parse')(u) || (u === '' && /^validate\d+$/.test(f))],
  ['HMAC authentication (key, signature, replay)', (u) => has('src/auth/', 'perp/perp-auth-hook.ts')(u)],
  ['rate limit', (u) => has('http/rate-limiter.ts')(u)],
  ['order nonce claim', (u) => has('store/order-nonce-store.ts')(u)],
  ['engine (admission, matching)', (u) => has('src/perp/engine/')(u)],
  ['journal (sequencer, codec, journal store)', (u) => has('src/perp/sequencer/', 'store/engine-journal-store.ts')(u)],
  ['projector (history, candles)', (u) => has('src/perp/projection/', 'store/perp-history-store.ts', 'store/perp-candle-store.ts')(u)],
  ['order service (checks, answer)', (u) => has('perp/order-service.ts', 'perp/venue-calls.ts', 'perp/perp-views.ts', 'perp/idempotency.ts', 'routes/trading-routes.ts', 'one-click-service.ts')(u)],
  ['WebSocket endpoint (frames, lane, key check)', (u) => has('streams/perp-stream-endpoint.ts', 'streams/stream-endpoint.ts', 'node_modules/ws/')(u)],
  ['response serialisation (envelope, JSON)', (u) => has('node_modules/fast-json-stringify', 'perp/perp-envelope.ts', 'http/envelope.ts')(u)],
  ['logging (pino)', (u) => has('node_modules/pino', 'node_modules/sonic-boom', 'node_modules/thread-stream', 'lib/logger.ts')(u)],
  ['metrics', (u) => has('src/observability/')(u)],
];

/** Frames every part uses: they decide only when no frame above matched. */
const SHARED: Rule[] = [
  ['SQLite and Kysely', (u, f) => has('node_modules/kysely', 'node_modules/better-sqlite3', 'src/storage/', 'bench/sqlite-timing.ts')(u) || (u === '' && /^(run|all|get|prepare|iterate|Statement)$/.test(f))],
  ['HTTP and Fastify (parsing, routing, hooks, sockets)', (u) => has('node_modules/fastify', 'node_modules/find-my-way', 'node_modules/@fastify', 'node_modules/avvio', 'node:_http', 'node:net', 'node:internal/streams', 'node:stream', 'node:internal/stream_base', 'node:events', 'src/http/')(u)],
  ['garbage collection', (u, f) => f === '(garbage collector)'],
  ['idle (the loop waiting)', (u, f) => f === '(idle)'],
];

const SQL_CATEGORY = 'SQLite and Kysely';
const SQL_PURPOSE_CATEGORY: Record<SqlPurpose, string> = {
  journal: 'SQLite: journal commits (group commit, fsync)',
  'nonce claim': 'SQLite: order nonce claims',
  projector: 'SQLite: projector writes (history, candles)',
  other: 'SQLite: other',
};

export interface ProfileBreakdown {
  name: string;
  orders: number;
  /** Sampled busy time per order (idle and the profiler left out), µs. */
  busyUsPerOrder: number;
  /** µs per order by category, largest first. */
  parts: Array<{ category: string; usPerOrder: number; share: number }>;
}

function categorise(p: Profile): Map<string, number> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map<number, string>();
  const categoryOf = (leaf: number): string => {
    const cached = memo.get(leaf);
    if (cached !== undefined) return cached;
    let found: string | undefined;
    for (const rules of [SEMANTIC, SHARED]) {
      for (let id: number | undefined = leaf; id !== undefined && found === undefined; id = parent.get(id)) {
        const { url, functionName } = byId.get(id)!.callFrame;
        const u = url.replace(/^file:\/\//, '');
        for (const [category, test] of rules) {
          if (test(u, functionName)) {
            found = category;
            break;
          }
        }
      }
      if (found !== undefined) break;
    }
    const { functionName } = byId.get(leaf)!.callFrame;
    const out = found ?? (functionName === '(program)' ? 'V8 and Node (other)' : 'other');
    memo.set(leaf, out);
    return out;
  };
  const us = new Map<string, number>();
  p.samples.forEach((s, i) => {
    const c = categoryOf(s);
    us.set(c, (us.get(c) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
  return us;
}

/** The breakdown of `<dir>/<name>.cpuprofile`. */
export function summariseProfile(dir: string, name: string): ProfileBreakdown {
  const profile = JSON.parse(fs.readFileSync(path.join(dir, `${name}.cpuprofile`), 'utf8')) as Profile;
  const orders = Number(fs.readFileSync(path.join(dir, `${name}.orders`), 'utf8'));
  const us = categorise(profile);
  us.delete('profiler');
  us.delete('idle (the loop waiting)');
  const sqlFile = path.join(dir, `${name}.sql.json`);
  const sqlProfiled = us.get(SQL_CATEGORY) ?? 0;
  if (fs.existsSync(sqlFile) && sqlProfiled > 0) {
    // The sampled SQLite-and-Kysely time split by purpose: the timed calls, then the rest (the
    // driver's and Kysely's JavaScript) in proportion to each purpose's statements.
    const sql = JSON.parse(fs.readFileSync(sqlFile, 'utf8')) as SqlTotals;
    const purposes = Object.keys(sql.us) as SqlPurpose[];
    const timed = purposes.reduce((a, k) => a + sql.us[k], 0);
    const statements = purposes.reduce((a, k) => a + sql.statements[k], 0);
    const scale = timed > sqlProfiled ? sqlProfiled / timed : 1;
    const rest = Math.max(0, sqlProfiled - timed * scale);
    us.delete(SQL_CATEGORY);
    for (const k of purposes) {
      const v = sql.us[k] * scale + (statements > 0 ? (rest * sql.statements[k]) / statements : 0);
      if (v > 0) us.set(SQL_PURPOSE_CATEGORY[k], v);
    }
  }
  const busy = [...us.values()].reduce((a, b) => a + b, 0);
  const parts = [...us.entries()]
    .map(([category, t]) => ({ category, usPerOrder: t / orders, share: t / busy }))
    .sort((a, b) => b.usPerOrder - a.usPerOrder);
  return { name, orders, busyUsPerOrder: busy / orders, parts };
}

/** The breakdowns side by side: one row a category, one column a profile (µs per order, share). */
export function breakdownTable(rows: ProfileBreakdown[]): string {
  const categories = [...new Set(rows.flatMap((r) => r.parts.map((p) => p.category)))];
  const first = rows[0];
  categories.sort((a, b) => (first.parts.find((p) => p.category === b)?.usPerOrder ?? 0) - (first.parts.find((p) => p.category === a)?.usPerOrder ?? 0));
  const cell = (r: ProfileBreakdown, c: string) => {
    const p = r.parts.find((x) => x.category === c);
    return p ? `${p.usPerOrder.toFixed(1)} (${(100 * p.share).toFixed(1)} %)` : '—';
  };
  return [
    `| µs per order (share of busy time) | ${rows.map((r) => `${r.name} (${r.orders} orders)`).join(' | ')} |`,
    `| --- | ${rows.map(() => '---:').join(' | ')} |`,
    ...categories.map((c) => `| ${c} | ${rows.map((r) => cell(r, c)).join(' | ')} |`),
    `| **busy time sampled, per order** | ${rows.map((r) => `**${r.busyUsPerOrder.toFixed(0)}**`).join(' | ')} |`,
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [dir, ...names] = process.argv.slice(2);
  if (!dir) {
    console.error('usage: npx tsx bench/perp-profile-summary.ts <dir> [name ...]');
    process.exit(2);
  }
  const found = names.length > 0 ? names : fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => f.replace(/\.cpuprofile$/, ''));
  const order = ['rest-order', 'rest-order-steady', 'floor', 'batch-orders', 'batch-orders-warm', 'ws-orders', 'ws-orders-warm'];
  found.sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99));
  console.log(breakdownTable(found.filter((n) => fs.existsSync(path.join(dir, `${n}.orders`))).map((n) => summariseProfile(dir, n))));
}
