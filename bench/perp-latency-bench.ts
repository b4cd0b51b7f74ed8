/**
 * Issue 40, item 2: latency at half of saturation, for single REST orders, batches of 20 and
 * WebSocket orders. For each way in, on a fresh server of bench/perp-orders-bench.ts (the perp API
 * with the engine in one process, journal on SQLite with synchronous = FULL, production logging):
 *
 * 1. saturation: the closed-loop throughput of bench/perp-orders-bench.ts (the same client, the same
 *    connections: autocannon for REST, pipelined place frames for the WebSocket), in orders a
 *    second. Measured here after a warm-up of 1,000 orders, or taken from that bench's figures of
 *    the same run (the full `npm run bench` passes them in);
 * 2. an open-loop load at half that rate (bench/open-loop.ts): a fixed schedule of sends, each
 *    latency measured from the request's scheduled time to its answer, so that neither a stalled
 *    server nor a late client hides a request's wait (no coordinated omission). Requests go out
 *    over keep-alive HTTP connections (at most BENCH_LATENCY_SOCKETS, default 64, in flight; more
 *    wait in the client, and that wait counts) or over BENCH_PERP_WS_CONNECTIONS (default 32)
 *    authenticated WebSockets (at most 16 frames in flight on one, the endpoint's queue).
 *
 *    Before it the server is let go quiet (the projector's backlog from the closed loop written),
 *    and one second of the schedule runs unmeasured (connections opened, the path compiled).
 *
 * Client p50, p99 and max of each, the client's own send lag (how late it started a send: part of
 * the latency, and small unless the client's core is starved), the rate achieved, the server's CPU
 * share during the open loop. Target (issue 40): p99 ≤ 10 ms for single and WebSocket orders; a
 * batch's latency is the batch's.
 *
 *   BENCH_ONLY=perp-latency npm run bench    or    npx tsx bench/perp-latency-bench.ts
 *   (BENCH_LATENCY_SECONDS, default 10; BENCH_LATENCY_SAT_ORDERS, default 6 000; BENCH_LATENCY_WARM, default 1 000; BENCH_LATENCY_SOCKETS;
 *   BENCH_LATENCY_KINDS=single,batch,ws; diagnosis: BENCH_LATENCY_RATE=<orders/s> instead of half of
 *   saturation, BENCH_LATENCY_PROF=<dir> for a CPU profile of each open loop and its breakdown, BENCH_LATENCY_DUMP=<dir>
 *   for every request's scheduled send and answer)
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { WebSocket } from 'ws';
import { signPerp } from '../src/auth/hmac.ts';
import { breakdownTable, summariseProfile } from './perp-profile-summary.ts';
import { dueCount, halfOfSaturation, latenciesFromSchedule, openLoopSchedule, summariseLatencies, type LatencySummary } from './open-loop.ts';
import {
  batchesOf, CHAIN_ID, childGcPauses, childUsage, makeWallets, sendBatches, sendFrames, sendOrders, signOrders, startChild, stopChild, threadSplit,
  openOrderStream, type Ready, type ServerChild, type SignedOrder,
} from './perp-orders-bench.ts';

export type LatencyKind = 'single' | 'batch' | 'ws';

export interface LatencyFigure {
  kind: LatencyKind;
  /** Orders a request (a batch's size; 1 otherwise). */
  ordersPerRequest: number;
  /** Closed-loop throughput, orders a second, and where it comes from. */
  saturatedPerSec: number;
  saturationFrom: 'measured' | 'given';
  /** The open loop's schedule, orders a second (half of saturation). */
  ratePerSec: number;
  /** Orders answered a second over the open loop (first scheduled send to last answer). */
  achievedPerSec: number;
  requests: number;
  orders: number;
  refused: number;
  /** Per request (a batch for `batch`), from its scheduled send. */
  latency: LatencySummary;
  /** How late the client started each send after its scheduled time (part of `latency`). */
  sendLag: LatencySummary;
  /** The server process's CPU over the open loops (the warm second and the measured) ÷ their wall time (1 = one core busy). */
  serverCpuShare: number;
  /** The load client's (this process's) CPU over the same time ÷ the wall time: with the server's, what the 2 cores carried. */
  clientCpuShare: number;
  /** The server's CPU an order over the open loops, by thread (perp-orders-bench.ts threadSplit): what a lone order costs each thread. */
  threads: string;
  /**
   * The order thread's wait for a core during the open loops (schedstat: runnable, not running):
   * ms a second of wall time, and on average each time it was put on a core. Every order waiting in
   * its queue waits that long too: the machine's share of the latency, which no code of the server
   * removes.
   */
  coreWait?: { msPerSec: number; perWakeupMs: number; writerMsPerSec: number };
  /**
   * The server's main-thread GC over the open loops: scavenges and the mark-compact's pauses (its
   * atomic pause, incremental marking steps, weak callbacks): count and ms a second of wall time, and
   * the longest pause, ms. Every request in the loop's queue waits out a pause.
   */
  gc?: { minor: { count: number; ms: number }; major: { count: number; ms: number }; longestMs: number; over5Ms: number };
  /** How long the server took to go quiet after the closed loop, before the open loop. */
  quietMs: number;
  /** Target p99, ms (single and WebSocket orders). */
  targetP99Ms?: number;
  loadAvg: number;
}

export interface PerpLatencyBenchResult {
  figures: LatencyFigure[];
  table: string;
}

const ORDER_PATH = '/v4/public/trader/orders';
const BATCH_PATH = '/v4/public/trader/orders/batch';

/**
 * Waits until `atMs` (performance.now() clock) with a timer (late by up to about a millisecond,
 * which counts in the latency). Not by spinning on setImmediate: that kept a core busy in the
 * client, taken from the server on a 2-core machine.
 */
function until(atMs: number): Promise<void> {
  const wait = atMs - performance.now();
  return wait > 0 ? new Promise((r) => setTimeout(r, wait)) : Promise.resolve();
}

/**
 * Runs `send(i)` for each request at its scheduled time (several at once when the client is late:
 * none is skipped) and answers the answer times (NaN for a refused or failed one) with the schedule.
 * `send` calls `done(i, ok)` when the answer is in.
 */
async function openLoop(count: number, ratePerSec: number, send: (i: number, done: (i: number, ok: boolean) => void) => void): Promise<{ schedule: number[]; answered: number[]; refused: number; sendLagMs: number[] }> {
  const schedule = openLoopSchedule(ratePerSec, count, performance.now() + 20);
  const answered = new Array<number>(count).fill(Number.NaN);
  let refused = 0;
  let left = count;
  let allIn!: () => void;
  const finished = new Promise<void>((r) => (allIn = r));
  const done = (i: number, ok: boolean) => {
    if (ok) answered[i] = performance.now();
    else refused++;
    if (--left === 0) allIn();
  };
  let next = 0;
  // How late the client itself was: each send's start after its scheduled time.
  const sendLagMs: number[] = [];
  while (next < count) {
    await until(schedule[next]);
    const now = performance.now();
    const due = dueCount(schedule, next, now);
    for (let k = 0; k < due; k++) {
      sendLagMs.push(now - schedule[next]);
      send(next++, done);
    }
  }
  if (count > 0) await finished;
  return { schedule, answered, refused, sendLagMs };
}

/** HTTP POSTs of pre-built bodies, HMAC-signed as they leave, over keep-alive sockets. */
function httpSender(baseUrl: string, keys: Ready['keys'], sockets: number) {
  const url = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets });
  return {
    post(requestPath: string, body: string, wallet: number, answer: (ok: boolean, text: string) => void) {
      const key = keys[wallet];
      const ts = String(Date.now());
      const req = http.request(
        {
          host: url.hostname, port: url.port, path: requestPath, method: 'POST', agent,
          headers: {
            'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'X-Api-Key': key.apiKey, 'X-Api-Ts': ts, 'X-Chain-Id': String(CHAIN_ID),
            'X-Api-Sign': signPerp(key.apiSecret, { ts, method: 'POST', requestPath, body }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => answer(res.statusCode === 200, Buffer.concat(chunks).toString()));
        },
      );
      req.on('error', () => answer(false, ''));
      req.end(body);
    },
    close: () => agent.destroy(),
  };
}

/** `connections` authenticated order-entry WebSockets, connection c for wallet c mod wallets (as sendFrames deals them). */
async function openStreams(wsUrl: string, keys: Ready['keys'], wallets: number, connections: number): Promise<WebSocket[]> {
  return Promise.all(Array.from({ length: connections }, (_, c) => openOrderStream(wsUrl, keys[c % wallets])));
}

/**
 * The open loop of one way in at `ordersPerSec` over `list` (each request's orders from it in
 * turn): its first `warmRequests` requests as an open loop of their own, not measured (the client's
 * connections opened and its path compiled), then the rest, measured, on the same connections.
 */
async function openLoopOf(
  kind: LatencyKind,
  server: ServerChild,
  list: SignedOrder[],
  o: { wallets: number; ordersPerSec: number; batchSize: number; sockets: number; wsConnections: number; warmRequests: number },
): Promise<{ requests: number; schedule: number[]; answered: number[]; refused: number; sendLagMs: number[] }> {
  const { keys, url, wsUrl } = server.ready;
  /** The warm loop, then the measured one, each request sent by `sendOne(index, answered)`. */
  const phases = async (requests: number, rate: number, sendOne: (i: number, answered: (ok: boolean) => void) => void) => {
    const warm = Math.min(o.warmRequests, requests);
    await openLoop(warm, rate, (j, done) => sendOne(j, (ok) => done(j, ok)));
    const r = await openLoop(requests - warm, rate, (j, done) => sendOne(warm + j, (ok) => done(j, ok)));
    return { requests: requests - warm, ...r };
  };
  if (kind === 'ws') {
    const sockets = await openStreams(wsUrl!, keys, o.wallets, o.wsConnections);
    const perWallet = (w: number) => Math.floor((o.wsConnections - 1 - w) / o.wallets) + 1;
    const dealt = Array.from({ length: o.wallets }, () => 0);
    const connOf = list.map((x) => x.wallet + o.wallets * (dealt[x.wallet]++ % perWallet(x.wallet)));
    // Per connection: the requests in flight (answered in the order sent) and those waiting for room.
    const lanes = sockets.map(() => ({ inFlight: [] as Array<{ i: number; answered: (ok: boolean) => void }>, waiting: [] as Array<{ i: number; answered: (ok: boolean) => void }> }));
    const frame = (i: number) => `{"op":"order","id":"${i}","action":"place","body":${list[i].body}}`;
    sockets.forEach((ws, c) =>
      ws.on('message', (raw) => {
        const f = JSON.parse(raw.toString()) as { type: string; code?: number };
        if (f.type !== 'result') throw new Error(`perp latency bench: unexpected frame ${raw.toString().slice(0, 200)}`);
        const lane = lanes[c];
        lane.inFlight.shift()!.answered(f.code === 0);
        const waiting = lane.waiting.shift();
        if (waiting !== undefined) {
          lane.inFlight.push(waiting);
          ws.send(frame(waiting.i));
        }
      }),
    );
    try {
      return await phases(list.length, o.ordersPerSec, (i, answered) => {
        const c = connOf[i];
        const lane = lanes[c];
        // The endpoint queues 16 frames a connection: more wait here, and their wait counts.
        if (lane.inFlight.length >= 16) return void lane.waiting.push({ i, answered });
        lane.inFlight.push({ i, answered });
        sockets[c].send(frame(i));
      });
    } finally {
      for (const ws of sockets) ws.close();
    }
  }
  const sender = httpSender(url, keys, o.sockets);
  try {
    if (kind === 'single') {
      return await phases(list.length, o.ordersPerSec, (i, answered) =>
        sender.post(ORDER_PATH, list[i].body, list[i].wallet, (ok, text) => answered(ok && (JSON.parse(text) as { code: number }).code === 0)),
      );
    }
    const batches = batchesOf(list, o.wallets, o.batchSize);
    return await phases(batches.length, o.ordersPerSec / o.batchSize, (i, answered) => {
      const b = batches[i];
      sender.post(BATCH_PATH, `{"orders":[${b.map((x) => x.body).join(',')}]}`, b[0].wallet, (ok, text) => {
        const answer = ok ? (JSON.parse(text) as { code: number; data?: { results?: Array<{ code: number }> } }) : undefined;
        answered(answer !== undefined && answer.code === 0 && (answer.data?.results ?? []).every((x) => x.code === 0));
      });
    });
  } finally {
    sender.close();
  }
}

/** Starts or stops (into `file`) the V8 profile of a server child started with BENCH_PERP_PROF. */
type Usage = Awaited<ReturnType<typeof childUsage>>;

/**
 * The order thread's wait for a core between two usages (schedstat, perp-orders-bench.ts
 * threadTimes), and the busiest other thread's (the journal's writer): undefined without /proc.
 */
export function coreWaitOf(pid: number | undefined, u0: Usage, u1: Usage, wallSeconds: number): LatencyFigure['coreWait'] {
  if (pid === undefined || !u0.waits || !u1.waits || !u0.wakeups || !u1.wakeups || !u0.threads || !u1.threads) return undefined;
  const d = (a: Record<string, number>, b: Record<string, number>, tid: string) => (b[tid] ?? 0) - (a[tid] ?? 0);
  const order = String(pid);
  const wakeups = d(u0.wakeups, u1.wakeups, order);
  const writer = Object.keys(u1.threads).filter((t) => t !== order).sort((a, b) => d(u0.threads!, u1.threads!, b) - d(u0.threads!, u1.threads!, a))[0];
  return {
    msPerSec: d(u0.waits, u1.waits, order) / 1e6 / wallSeconds,
    perWakeupMs: wakeups > 0 ? d(u0.waits, u1.waits, order) / 1e6 / wakeups : 0,
    writerMsPerSec: writer === undefined ? 0 : d(u0.waits, u1.waits, writer) / 1e6 / wallSeconds,
  };
}

function profile(server: ServerChild, what: 'start' | 'stop', file = ''): Promise<void> {
  return new Promise((resolve) => {
    const on = (m: any) => {
      if (m?.profiled === what) {
        server.child.off('message', on);
        resolve();
      }
    };
    server.child.on('message', on);
    server.child.send({ profile: what, file });
  });
}

/**
 * Resolves once the server has been quiet (under 5 % of a core) for two 250 ms windows in a row, at
 * most `maxMs`: after a closed-loop run the projector writes the history of its orders for seconds
 * more, on the same database connection as the nonce claims and the journal, and an open loop
 * started then would time that backlog, not the load it sends. Answers the wait in ms.
 */
async function quiet(server: ServerChild, maxMs = 60_000): Promise<number> {
  const t0 = performance.now();
  let calm = 0;
  let last = await childUsage(server.child);
  while (calm < 2 && performance.now() - t0 < maxMs) {
    await new Promise((r) => setTimeout(r, 250));
    const now = await childUsage(server.child);
    calm = now.us - last.us < 0.05 * 250_000 ? calm + 1 : 0;
    last = now;
  }
  return performance.now() - t0;
}

/**
 * `saturated`: closed-loop throughputs (orders a second) already measured in this run (the
 * perp-orders part): then not measured again.
 */
export async function runPerpLatencyBench(opts: { saturated?: Partial<Record<LatencyKind, number>>; kinds?: LatencyKind[] } = {}): Promise<PerpLatencyBenchResult> {
  const kinds = opts.kinds ?? (process.env.BENCH_LATENCY_KINDS ?? 'single,batch,ws').split(',').filter((k): k is LatencyKind => k === 'single' || k === 'batch' || k === 'ws');
  // Diagnosis only: an open-loop rate (orders a second) instead of half of saturation.
  const fixedRate = process.env.BENCH_LATENCY_RATE ? Number(process.env.BENCH_LATENCY_RATE) : undefined;
  const seconds = Number(process.env.BENCH_LATENCY_SECONDS ?? 10);
  const satOrders = Number(process.env.BENCH_LATENCY_SAT_ORDERS ?? 6_000);
  const sockets = Number(process.env.BENCH_LATENCY_SOCKETS ?? 64);
  const walletCount = Number(process.env.BENCH_PERP_WALLETS ?? 16);
  const connections = Number(process.env.BENCH_PERP_CONNECTIONS ?? 32);
  const batchConnections = Number(process.env.BENCH_PERP_BATCH_CONNECTIONS ?? 16);
  const wsConnections = Math.max(walletCount, Number(process.env.BENCH_PERP_WS_CONNECTIONS ?? 32));
  const wsWindow = Math.min(16, Math.max(1, Number(process.env.BENCH_PERP_WS_WINDOW ?? 8)));
  const batchSize = 20;
  // BENCH_LATENCY_WARM: the warm-up before the closed loop. 1,000 by default, as every figure before
  // 27 November; V8 keeps optimising the order path long after that (196 functions in the next 4,000
  // orders, still 45 in 8,000 after 17,000; docs/performance.md, "A warm server"), and the
  // sequencer's event buffer fills only after about 28,000: a larger one measures the venue as it runs for days.
  const warm = Math.max(1, Number(process.env.BENCH_LATENCY_WARM ?? 1_000));
  const wallets = makeWallets(walletCount);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-perp-latency-'));
  const master = randomBytes(32).toString('hex');
  const figures: LatencyFigure[] = [];
  // Diagnosis: BENCH_LATENCY_PROF=<dir> profiles each open loop (warm second included) in its server
  // (bench/perp-profile-summary.ts). The profiler slows the server: not the bench's figures.
  const profDir = process.env.BENCH_LATENCY_PROF ? path.resolve(process.env.BENCH_LATENCY_PROF) : undefined;
  const profiled: string[] = [];
  try {
    for (const kind of kinds) {
      // Profiled only with BENCH_LATENCY_PROF (a BENCH_PERP_PROF of the environment is runPerpOrdersBench's).
      const server = await startChild(['server', path.join(dir, `${kind}.sqlite`), '-', ...wallets.map((w) => w.address)], master, { BENCH_PERP_PROF: profDir ?? '', ...(kind === 'ws' ? { BENCH_PERP_WS: 'on' } : {}) });
      try {
        const { keys, url } = server.ready;
        const closed = (l: SignedOrder[]) =>
          kind === 'single'
            ? sendOrders(l, url, keys, connections)
            : kind === 'batch'
              ? sendBatches(batchesOf(l, walletCount, batchSize), url, keys, batchConnections)
              : sendFrames(l, server.ready.wsUrl!, keys, walletCount, wsConnections, wsWindow);
        const given = opts.saturated?.[kind];
        const first = await signOrders(wallets, warm + (given === undefined ? satOrders : 0));
        const w = await closed(first.slice(0, warm));
        if (w.refused > 0) throw new Error(`perp latency bench: ${w.refused} ${kind} warm-up orders refused`);
        let saturatedPerSec: number;
        if (given === undefined) {
          const s = await closed(first.slice(warm));
          if (s.refused > 0) throw new Error(`perp latency bench: ${s.refused} ${kind} orders refused at saturation`);
          saturatedPerSec = satOrders / s.seconds;
        } else {
          saturatedPerSec = given;
        }
        const ratePerSec = fixedRate ?? halfOfSaturation(saturatedPerSec);
        // Whole batches for the batch figure; one second of the schedule first, not measured.
        const perRequest = kind === 'batch' ? batchSize : 1;
        const warmRequests = Math.max(1, Math.round(ratePerSec / perRequest));
        const measured = Math.max(1, Math.round((ratePerSec * seconds) / perRequest));
        const list = await signOrders(wallets, (warmRequests + measured) * perRequest, first.length + 1);
        const quietMs = await quiet(server);
        const u0 = await childUsage(server.child);
        const c0 = process.cpuUsage();
        // The server's CPU share is over both loops, the warm second included.
        const t0 = performance.now();
        if (profDir) await profile(server, 'start');
        const r = await openLoopOf(kind, server, list, { wallets: walletCount, ordersPerSec: ratePerSec, batchSize, sockets, wsConnections, warmRequests });
        const wall = (Math.max(...r.answered.filter((x) => !Number.isNaN(x))) - r.schedule[0]) / 1000;
        const c1 = process.cpuUsage(c0);
        const u1 = await childUsage(server.child);
        const pauses = u0.gcPauses === undefined ? undefined : await childGcPauses(server.child, u0.gcPauses);
        const loopSeconds = (performance.now() - t0) / 1000;
        const perSec = (ps: Array<[number, number]>) => ({ count: ps.length / loopSeconds, ms: ps.reduce((a, [, ms]) => a + ms, 0) / loopSeconds });
        const gc = pauses && {
          minor: perSec(pauses.filter(([k]) => k === 1)), major: perSec(pauses.filter(([k]) => k !== 1)),
          longestMs: pauses.reduce((a, [, ms]) => Math.max(a, ms), 0), over5Ms: pauses.filter(([, ms]) => ms > 5).length,
        };
        if (profDir) {
          await profile(server, 'stop', path.resolve(profDir, `latency-${kind}.cpuprofile`));
          fs.writeFileSync(path.resolve(profDir, `latency-${kind}.orders`), String(list.length));
          profiled.push(`latency-${kind}`);
        }
        const latency = summariseLatencies(latenciesFromSchedule(r.schedule, r.answered));
        // BENCH_LATENCY_DUMP=<dir>: each request's scheduled send and answer (ms of the client's performance clock, with its origin in epoch ms to line them up with a server's log), to see whether the tail comes in episodes.
        if (process.env.BENCH_LATENCY_DUMP) fs.writeFileSync(path.resolve(process.env.BENCH_LATENCY_DUMP, `latency-${kind}.json`), JSON.stringify({ origin: performance.timeOrigin, schedule: r.schedule, answered: r.answered }));
        const sendLag = summariseLatencies(r.sendLagMs);
        figures.push({
          kind, ordersPerRequest: perRequest, saturatedPerSec, saturationFrom: given === undefined ? 'measured' : 'given', ratePerSec,
          achievedPerSec: ((r.requests - r.refused) * perRequest) / wall, requests: r.requests, orders: r.requests * perRequest, refused: r.refused, latency, sendLag, quietMs,
          serverCpuShare: (u1.us - u0.us) / ((performance.now() - t0) * 1000),
          clientCpuShare: (c1.user + c1.system) / ((performance.now() - t0) * 1000),
          threads: threadSplit(server.child.pid, u0.threads, u1.threads, (warmRequests + measured) * perRequest),
          coreWait: coreWaitOf(server.child.pid, u0, u1, (performance.now() - t0) / 1000), gc,
          ...(kind === 'batch' ? {} : { targetP99Ms: 10 }), loadAvg: os.loadavg()[0],
        });
      } finally {
        await stopChild(server.child);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const name = { single: 'single REST orders', batch: `batches of ${batchSize} over REST (latency per batch)`, ws: 'WebSocket orders' } as const;
  const table = [
    `| way in | saturation (closed loop) | open loop at ${fixedRate === undefined ? 'half' : 'a fixed rate'}: scheduled / achieved | requests (refused) | p50 / p99 / max from the scheduled send | of which the client's own send lag p50 / p99 | server CPU share (client's) | server CPU an order by thread, µs | waiting for a core, ms a second: order thread (a wake-up) · writer | GC on the order thread: scavenges a second (ms a second) · mark-compact pauses a second (ms a second) · longest pause, pauses over 5 ms | target p99 | load avg |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- | ---: |',
    ...figures.map((f) =>
      `| ${name[f.kind]} | ${f.saturatedPerSec.toFixed(0)} orders/s${f.saturationFrom === 'given' ? ' (this run\'s perp-orders figure)' : ''} | ${f.ratePerSec.toFixed(0)} / ${f.achievedPerSec.toFixed(0)} orders/s | ${f.requests} (${f.refused}) | ` +
        `${f.latency.p50Ms.toFixed(1)} / ${f.latency.p99Ms.toFixed(1)} / ${f.latency.maxMs.toFixed(1)} ms | ${f.sendLag.p50Ms.toFixed(1)} / ${f.sendLag.p99Ms.toFixed(1)} ms | ${(100 * f.serverCpuShare).toFixed(0)} % (${(100 * f.clientCpuShare).toFixed(0)} %) | ${f.threads} | ` +
        `${f.coreWait ? `${f.coreWait.msPerSec.toFixed(1)} (${(f.coreWait.perWakeupMs * 1000).toFixed(0)} µs) · ${f.coreWait.writerMsPerSec.toFixed(1)}` : 'n/a'} | ` +
        `${f.gc ? `${f.gc.minor.count.toFixed(1)} (${f.gc.minor.ms.toFixed(1)}) · ${f.gc.major.count.toFixed(2)} (${f.gc.major.ms.toFixed(1)}) · ${f.gc.longestMs.toFixed(1)} ms, ${f.gc.over5Ms}` : 'n/a'} | ` +
        `${f.targetP99Ms === undefined ? '—' : `≤ ${f.targetP99Ms} ms: ${f.latency.p99Ms <= f.targetP99Ms && f.refused === 0 ? 'met' : 'NOT met'}`} | ${f.loadAvg.toFixed(1)} |`,
    ),
  ].join('\n');
  const breakdown = profDir && profiled.length > 0 ? `\n\nwhere the time goes in the open loops (${profDir}):\n\n${breakdownTable(profiled.map((n) => summariseProfile(profDir, n)))}` : '';
  return { figures, table: table + breakdown };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log((await runPerpLatencyBench()).table);
}
