/**
 * What one message between two processes costs on this machine: the floor under every hop of the
 * scaled-out perp topology (issue 40, item 5). Two Node processes exchange small messages over a
 * socket, TCP on 127.0.0.1 and a Unix socket: the client sends a message of BENCH_HOP_BYTES (default
 * 300, about a command message) and waits for the echo before the next, paced at BENCH_HOP_RATE a
 * second (default 1 000, so each message finds its receiver asleep, as an order does below
 * saturation), then the same unpaced (back to back). Each side's CPU (user + system) per round
 * trip, and the wall time of one; a round trip is two hops, each a write that wakes the other
 * process. Beside it, the same against Redis (a PING, and an XADD of the same size) from one
 * client, with the Redis server's CPU per command when REDIS_URL is set.
 *
 *   npx tsx bench/wakeup-cost-bench.ts     (BENCH_HOP_COUNT, default 5 000; BENCH_HOP_RATE; BENCH_HOP_BYTES)
 */
import { fork } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';

const COUNT = Number(process.env.BENCH_HOP_COUNT ?? 5_000);
const RATE = Number(process.env.BENCH_HOP_RATE ?? 1_000);
const BYTES = Number(process.env.BENCH_HOP_BYTES ?? 300);

export interface HopFigure {
  transport: string;
  paced: boolean;
  /** µs of CPU a round trip: the sender, the echoing process (or Redis). */
  clientUs: number;
  serverUs: number;
  /** µs of wall time a round trip (the unpaced runs only say how fast it can go). */
  wallUs: number;
}

/** The echoing process: answers each newline-terminated message with itself; reports its CPU on request. */
function serveEcho(): void {
  const where = process.argv[3];
  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('data', (chunk) => socket.write(chunk));
  });
  server.listen(where === 'tcp' ? { host: '127.0.0.1', port: 0 } : { path: where }, () => {
    const address = server.address();
    process.send?.({ ready: typeof address === 'object' && address !== null ? address.port : where });
  });
  process.on('message', (m) => {
    if (m === 'cpu') {
      const u = process.cpuUsage();
      process.send?.({ cpu: u.user + u.system });
    }
    if (m === 'stop') server.close(() => process.exit(0));
  });
}

function childCpu(child: ReturnType<typeof fork>): Promise<number> {
  return new Promise((resolve) => {
    const on = (m: any) => {
      if (m?.cpu !== undefined) {
        child.off('message', on);
        resolve(m.cpu);
      }
    };
    child.on('message', on);
    child.send('cpu');
  });
}

const ownCpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** `count` round trips of `send` (resolves on the answer), paced at `rate` a second or back to back. */
async function roundTrips(send: () => Promise<void>, count: number, rate: number | undefined): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    if (rate !== undefined) {
      const due = t0 + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    await send();
  }
  return performance.now() - t0;
}

/** The paced and the unpaced figure of `send`, with `otherCpu` the receiving side's CPU so far (µs). */
async function measured(transport: string, send: () => Promise<void>, otherCpu: () => Promise<number>): Promise<HopFigure[]> {
  await roundTrips(send, 500, undefined);
  const out: HopFigure[] = [];
  for (const paced of [true, false]) {
    const c0 = ownCpu();
    const s0 = await otherCpu();
    const wall = await roundTrips(send, COUNT, paced ? RATE : undefined);
    const c1 = ownCpu();
    const s1 = await otherCpu();
    out.push({ transport, paced, clientUs: (c1 - c0) / COUNT, serverUs: (s1 - s0) / COUNT, wallUs: (wall * 1000) / COUNT });
  }
  return out;
}

async function socketFigures(kind: 'tcp' | 'unix'): Promise<HopFigure[]> {
  const where = kind === 'tcp' ? 'tcp' : path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hop-')), 'echo.sock');
  const child = fork(new URL(import.meta.url).pathname, ['echo', where], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const target = await new Promise<number | string>((resolve) => child.on('message', (m: any) => m?.ready !== undefined && resolve(m.ready)));
  const socket = await new Promise<net.Socket>((resolve) => {
    const s = typeof target === 'number' ? net.connect({ host: '127.0.0.1', port: target }, () => resolve(s)) : net.connect({ path: target }, () => resolve(s));
  });
  socket.setNoDelay(true);
  const message = Buffer.from(`${'x'.repeat(BYTES - 1)}\n`);
  let waiting: (() => void) | undefined;
  let got = 0;
  socket.on('data', (chunk) => {
    got += chunk.length;
    if (got >= message.length) {
      got -= message.length;
      const w = waiting;
      waiting = undefined;
      w?.();
    }
  });
  const send = () =>
    new Promise<void>((resolve) => {
      waiting = resolve;
      socket.write(message);
    });
  const out = await measured(kind === 'tcp' ? 'TCP on 127.0.0.1' : 'Unix socket', send, () => childCpu(child));
  socket.destroy();
  child.send('stop');
  await new Promise((r) => child.once('exit', r));
  if (kind === 'unix') fs.rmSync(path.dirname(where), { recursive: true, force: true });
  return out;
}

/** Redis's own CPU so far (INFO's used_cpu_sys + used_cpu_user), µs. */
async function redisCpu(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`used_cpu_${name}:([0-9.]+)`).exec(info)?.[1] ?? '0');
  return (field('sys') + field('user')) * 1e6;
}

async function redisFigures(url: string): Promise<HopFigure[]> {
  const redis = new Redis(url, { lazyConnect: true });
  await redis.connect();
  const stream = `bench:hop:${process.pid}`;
  const payload = 'x'.repeat(BYTES);
  const out: HopFigure[] = [];
  try {
    for (const [name, send] of [
      ['Redis PING', async () => void (await redis.ping())],
      ['Redis XADD (MAXLEN ~ 1000)', async () => void (await redis.xadd(stream, 'MAXLEN', '~', 1_000, '*', 'm', payload))],
    ] as const) {
      // The two INFO calls are Redis's own work too: a few µs over COUNT commands.
      out.push(...(await measured(name, send, () => redisCpu(redis))));
    }
  } finally {
    await redis.del(stream);
    redis.disconnect();
  }
  return out;
}

export async function runWakeupCostBench(): Promise<{ figures: HopFigure[]; table: string }> {
  const figures = [...(await socketFigures('tcp')), ...(await socketFigures('unix')), ...(process.env.REDIS_URL ? await redisFigures(process.env.REDIS_URL) : [])];
  const table = [
    `| round trip (${BYTES} bytes out, ${COUNT} of them) | pacing | sender's CPU, µs | receiver's CPU, µs | both | wall, µs |`,
    '| --- | --- | ---: | ---: | ---: | ---: |',
    ...figures.map((f) => `| ${f.transport} | ${f.paced ? `${RATE} a second` : 'back to back'} | ${f.clientUs.toFixed(1)} | ${f.serverUs.toFixed(1)} | ${(f.clientUs + f.serverUs).toFixed(1)} | ${f.wallUs.toFixed(1)} |`),
  ].join('\n');
  return { figures, table };
}

if (process.argv[2] === 'echo') serveEcho();
else if (import.meta.url === pathToFileURL(process.argv[1]).href) console.log((await runWakeupCostBench()).table);
