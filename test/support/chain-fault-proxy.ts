/**
 * A JSON-RPC proxy in front of a node (anvil in the tests) that injects the faults a real RPC
 * provider shows, at a rate and in an order decided by a seeded PRNG so that a failing run can be
 * replayed with the same seed.
 *
 * Per JSON-RPC call (each element of a batch counts as one call), with probability `rate`, one
 * fault applicable to the call is chosen uniformly:
 *
 * - `eth_sendRawTransaction` only:
 *   - `nonce-too-low`, `replacement-underpriced`: answered as the node's error, NOT forwarded (the
 *     node never saw the transaction: a lie the sender must survive without losing the intent);
 *   - `already-known`: forwarded first, then answered as the node's "already known" (the node does
 *     hold the transaction, as when a retried broadcast reaches it a second time);
 *   - `drop-after-forward`: forwarded, the node's answer read, then the client's socket destroyed
 *     with no answer (the classic "did it land?" case).
 * - any method:
 *   - `http-429`, `http-503`: the whole HTTP exchange answered with that status, nothing forwarded
 *     (429 with a JSON-RPC error body, code -32005, as hosted providers rate-limit; 503 with a plain
 *     text body, as a load balancer answers for a node that is away);
 *   - `hang`: nothing forwarded, nothing answered; the socket is destroyed after `hangMs` (by then
 *     the client has given up) or when the proxy closes.
 *
 * An HTTP-level fault (429, 503, hang) chosen for any call of a batch applies to the whole batch.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { keccak256, type Hex } from 'viem';

export const SEND_FAULTS = ['nonce-too-low', 'replacement-underpriced', 'already-known', 'drop-after-forward'] as const;
export const ANY_CALL_FAULTS = ['http-429', 'http-503', 'hang'] as const;
export type ChainFaultKind = (typeof SEND_FAULTS)[number] | (typeof ANY_CALL_FAULTS)[number];
export const CHAIN_FAULT_KINDS: readonly ChainFaultKind[] = [...SEND_FAULTS, ...ANY_CALL_FAULTS];

export interface ChainFaultProxyOptions {
  /** The node's URL. */
  upstream: string;
  /** PRNG seed. Default 1. */
  seed?: number | string;
  /** Probability of a fault per JSON-RPC call, 0..1. Default 0 (change it with `setRate`). */
  rate?: number;
  /** The kinds to inject. Default all. */
  kinds?: readonly ChainFaultKind[];
  /** Only these methods get faults. Default: every method. */
  methods?: readonly string[];
  /** Stop injecting after this many faults (counted over the proxy's life, not reset by `resetStats`). Default: no limit. */
  maxFaults?: number;
  /** How long a hung exchange holds the socket before destroying it. Default 6 000 ms. */
  hangMs?: number;
  /**
   * A node slow under load, apart from the faults: the first `calls` exchanges holding a call of one
   * of `methods` are forwarded only after `ms`, and answered as the node answers.
   */
  slow?: { methods: readonly string[]; calls: number; ms: number };
  /**
   * A node that accepts a transaction and then loses it (evicted from its pool, restarted before it
   * was mined): the first `sends` `eth_sendRawTransaction` calls without another fault are answered
   * with the transaction's hash, as a node that took it answers, and not forwarded.
   */
  lose?: { sends: number };
  host?: string;
  port?: number;
}

export interface ChainFaultStats {
  /** HTTP exchanges received. */
  httpRequests: number;
  /** JSON-RPC calls received (batch elements counted one by one). */
  calls: number;
  /** Of those, `eth_sendRawTransaction`. */
  sends: number;
  /** Calls forwarded to the node. */
  forwarded: number;
  /** Faults injected, by kind (an HTTP-level fault of a batch counts once). */
  faults: Record<ChainFaultKind, number>;
  /** Sum of `faults`. */
  totalFaults: number;
  /** Exchanges held back by `slow`. */
  slowed: number;
  /** Transactions answered and not forwarded by `lose`. */
  lost: number;
}

export interface ChainFaultProxy {
  readonly url: string;
  readonly rate: number;
  /** Changes the fault rate (and, when given, re-seeds the PRNG) from the next call on. */
  setRate(rate: number, seed?: number | string): void;
  stats(): ChainFaultStats;
  /** Zeroes the counters. */
  resetStats(): void;
  /** Stops listening and destroys every open exchange (hung ones included). */
  close(): Promise<void>;
}

interface RpcCall {
  jsonrpc?: string;
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

function seedOf(seed: number | string): number {
  if (typeof seed === 'number') return seed >>> 0;
  let h = 2166136261;
  for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function seededRandom(seed: number | string): () => number {
  let a = seedOf(seed);
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NODE_ERRORS: Record<(typeof SEND_FAULTS)[number], { code: number; message: string }> = {
  'nonce-too-low': { code: -32003, message: 'nonce too low' },
  'replacement-underpriced': { code: -32603, message: 'replacement transaction underpriced' },
  'already-known': { code: -32000, message: 'already known' },
  'drop-after-forward': { code: 0, message: '' },
};

const isHttpLevel = (k: ChainFaultKind): k is (typeof ANY_CALL_FAULTS)[number] => (ANY_CALL_FAULTS as readonly string[]).includes(k);

function emptyFaults(): Record<ChainFaultKind, number> {
  return Object.fromEntries(CHAIN_FAULT_KINDS.map((k) => [k, 0])) as Record<ChainFaultKind, number>;
}

export async function startChainFaultProxy(opts: ChainFaultProxyOptions): Promise<ChainFaultProxy> {
  let rate = opts.rate ?? 0;
  let random = seededRandom(opts.seed ?? 1);
  const enabled = new Set<ChainFaultKind>(opts.kinds ?? CHAIN_FAULT_KINDS);
  const sendKinds = CHAIN_FAULT_KINDS.filter((k) => enabled.has(k));
  const otherKinds = ANY_CALL_FAULTS.filter((k) => enabled.has(k));
  const hangMs = opts.hangMs ?? 6_000;
  const methods = opts.methods ? new Set(opts.methods) : undefined;
  let injected = 0;
  let stats = { httpRequests: 0, calls: 0, sends: 0, forwarded: 0, faults: emptyFaults(), slowed: 0, lost: 0 };
  let loseLeft = opts.lose?.sends ?? 0;
  let slowLeft = opts.slow?.calls ?? 0;
  const slowMethods = new Set(opts.slow?.methods ?? []);
  const sockets = new Set<Socket>();
  const hangTimers = new Set<NodeJS.Timeout>();
  let closed = false;

  /** The fault for one call, or undefined. The PRNG is drawn the same number of times whatever the outcome. */
  const decide = (method: unknown): ChainFaultKind | undefined => {
    const roll = random();
    const pick = random();
    if (roll >= rate) return undefined;
    if (methods && !methods.has(String(method))) return undefined;
    if (opts.maxFaults !== undefined && injected >= opts.maxFaults) return undefined;
    const kinds = method === 'eth_sendRawTransaction' ? sendKinds : otherKinds;
    if (kinds.length === 0) return undefined;
    injected++;
    return kinds[Math.floor(pick * kinds.length)];
  };

  const forward = async (body: unknown): Promise<unknown> => {
    const res = await fetch(opts.upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    return JSON.parse(text) as unknown;
  };

  const answer = (res: http.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse, raw: string): Promise<void> => {
    stats.httpRequests++;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      answer(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
      return;
    }
    const batch = Array.isArray(parsed);
    const calls = (batch ? parsed : [parsed]) as RpcCall[];
    const chosen = calls.map((c) => {
      stats.calls++;
      if (c?.method === 'eth_sendRawTransaction') stats.sends++;
      return decide(c?.method);
    });

    const httpFault = chosen.find((k): k is (typeof ANY_CALL_FAULTS)[number] => k !== undefined && isHttpLevel(k));
    if (httpFault) {
      stats.faults[httpFault]++;
      if (httpFault === 'hang') {
        const timer = setTimeout(() => {
          hangTimers.delete(timer);
          req.socket.destroy();
        }, hangMs);
        hangTimers.add(timer);
        return;
      }
      if (httpFault === 'http-429') {
        // As hosted providers answer a rate limit: the status with a JSON-RPC error (-32005, limit exceeded).
        answer(res, 429, { jsonrpc: '2.0', id: null, error: { code: -32005, message: 'Too Many Requests' } });
      } else {
        // As a load balancer answers for a node that is away: the status with a plain body.
        res.writeHead(503, { 'content-type': 'text/plain', 'content-length': 19 });
        res.end('Service Unavailable');
      }
      return;
    }

    // Calls answered here without the node: nonce too low, replacement underpriced.
    const out: unknown[] = new Array(calls.length);
    const toForward: { index: number; call: RpcCall }[] = [];
    for (let i = 0; i < calls.length; i++) {
      const k = chosen[i];
      if (k === 'nonce-too-low' || k === 'replacement-underpriced') {
        stats.faults[k]++;
        out[i] = { jsonrpc: '2.0', id: calls[i]?.id ?? null, error: NODE_ERRORS[k] };
      } else if (k === undefined && loseLeft > 0 && calls[i]?.method === 'eth_sendRawTransaction' && Array.isArray(calls[i].params)) {
        loseLeft--;
        stats.lost++;
        out[i] = { jsonrpc: '2.0', id: calls[i]?.id ?? null, result: keccak256((calls[i].params as Hex[])[0]) };
      } else {
        toForward.push({ index: i, call: calls[i] });
      }
    }
    let dropAfter = false;
    if (toForward.length > 0) {
      if (slowLeft > 0 && toForward.some((f) => slowMethods.has(String(f.call?.method)))) {
        slowLeft--;
        stats.slowed++;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            hangTimers.delete(timer);
            resolve();
          }, opts.slow!.ms);
          hangTimers.add(timer);
        });
        if (closed) {
          req.socket.destroy();
          return;
        }
      }
      let answers: unknown;
      try {
        answers = await forward(batch ? toForward.map((f) => f.call) : toForward[0].call);
      } catch {
        // The node is away: the client sees what it would see without the proxy, a broken exchange.
        req.socket.destroy();
        return;
      }
      stats.forwarded += toForward.length;
      const list = (batch ? answers : [answers]) as RpcCall[];
      const byId = new Map<unknown, unknown>();
      if (batch && Array.isArray(list)) for (const a of list) byId.set(a?.id, a);
      toForward.forEach((f, j) => {
        const k = chosen[f.index];
        const upstream = batch ? (byId.get(f.call?.id) ?? list[j]) : list[0];
        if (k === 'already-known') {
          stats.faults[k]++;
          out[f.index] = { jsonrpc: '2.0', id: f.call?.id ?? null, error: NODE_ERRORS[k] };
        } else {
          if (k === 'drop-after-forward') {
            stats.faults[k]++;
            dropAfter = true;
          }
          out[f.index] = upstream;
        }
      });
    }
    if (dropAfter) {
      req.socket.destroy();
      return;
    }
    answer(res, 200, batch ? out : out[0]);
  };

  const server = http.createServer((req, res) => {
    if (req.method !== 'POST') {
      answer(res, 405, { error: 'POST only' });
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (closed) {
        req.socket.destroy();
        return;
      }
      handle(req, res, Buffer.concat(chunks).toString('utf8')).catch(() => req.socket.destroy());
    });
  });
  server.keepAliveTimeout = 5_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { port, address } = server.address() as AddressInfo;
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;

  return {
    url,
    get rate() {
      return rate;
    },
    setRate(r, seed) {
      if (!(r >= 0 && r <= 1)) throw new Error('rate: must be within 0..1');
      rate = r;
      if (seed !== undefined) random = seededRandom(seed);
    },
    stats: () => ({ ...stats, faults: { ...stats.faults }, totalFaults: Object.values(stats.faults).reduce((a, b) => a + b, 0) }),
    resetStats() {
      stats = { httpRequests: 0, calls: 0, sends: 0, forwarded: 0, faults: emptyFaults(), slowed: 0, lost: 0 };
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const t of hangTimers) clearTimeout(t);
      hangTimers.clear();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await done;
    },
  };
}
