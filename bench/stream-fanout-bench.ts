/**
 * Stream fan-out: BENCH_STREAM_SUBSCRIBERS (default 1,000) WebSocket subscribers of one perpetual
 * book's `depth` stream while a load of orders moves it, end to end through the real parts (the
 * sequencer journalling to SQLite, the perp stream task, the publisher, the in-process broker, the
 * hub and the endpoint); then a bare `ws` server broadcasting the very frames those subscribers got,
 * to as many subscribers, in the same run. The subscribers live in a process of their own
 * (bench/stream-clients.ts) on the machine's other core.
 *
 * Figures: under the load, update frames delivered per second (all subscribers together; bounded by
 * how many book changes the engine's events make, one update per journal commit at most) and the
 * delay from the order's submission to a frame's arrival (p50, p99; the journal's group commit
 * included). Then the fan-out's capacity: the same frames published again as fast as the sockets take
 * them, through the publisher, broker, hub and endpoint, against the bare broadcast of the same
 * frames (target ≥ 0.5 of its rate).
 *
 *   npx tsx bench/stream-fanout-bench.ts   (BENCH_STREAM_SUBSCRIBERS, BENCH_STREAM_SECONDS=5)
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Fastify from 'fastify';
import { WebSocketServer } from 'ws';
import { DEFAULT_INSTRUMENTS } from '../src/perp/engine/instruments.ts';
import type { EngineCommand } from '../src/perp/engine/engine-types.ts';
import { createInProcessGateway } from '../src/perp/sequencer/engine-gateway.ts';
import { EngineSequencer } from '../src/perp/sequencer/engine-sequencer.ts';
import { perpChannels } from '../src/perp/streams/perp-stream-channels.ts';
import { createPerpStreamTask } from '../src/perp/streams/perp-stream-task.ts';
import { openDatabase } from '../src/storage/database.ts';
import { createMemoryStreamBroker } from '../src/streams/stream-broker.ts';
import { attachStreamEndpoint } from '../src/streams/stream-endpoint.ts';
import { createStreamHub } from '../src/streams/stream-hub.ts';
import { createStreamPublisher } from '../src/streams/stream-publisher.ts';
import { perpCommandStream } from '../test/support/perp-command-stream.ts';

export interface StreamFanoutFigures {
  subscribers: number;
  /** Under the order load: every update the engine's events made, to every subscriber. */
  streams: { frames: number; seconds: number; perSec: number; p50: number; p99: number; orders: number };
  /** The same frames published again as fast as the sockets take them (publisher → hub → sockets). */
  capacity: { frames: number; seconds: number; perSec: number; p50: number; p99: number };
  bare: { frames: number; seconds: number; perSec: number; p50: number; p99: number };
  ratio: number;
}

const quiet = { info() {}, warn() {}, error() {} };

interface Clients {
  child: ChildProcess;
  request<T>(msg: unknown, key: string): Promise<T>;
}

function startClients(): Clients {
  const child = fork(new URL('./stream-clients.ts', import.meta.url).pathname, [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return {
    child,
    request: <T>(msg: unknown, key: string) =>
      new Promise<T>((resolve) => {
        const on = (m: any) => {
          if (m?.[key] !== undefined) {
            child.off('message', on);
            resolve(m[key] as T);
          }
        };
        child.on('message', on);
        child.send(msg as object);
      }),
  };
}

type ClientResult = { frames: number; seconds: number; p50: number; p99: number; kept: string[] };

/** Waits until the subscribers' count stops growing: everything sent has arrived. */
async function drained(clients: Clients, expected?: number): Promise<void> {
  let last = -1;
  for (;;) {
    await new Promise((r) => setTimeout(r, 250));
    const r = await clients.request<ClientResult>({ stop: true }, 'result');
    if (expected !== undefined ? r.frames >= expected : r.frames === last) return;
    last = r.frames;
  }
}

export async function runStreamFanoutBench(opts: { subscribers?: number; seconds?: number; print?: (s: string) => void } = {}): Promise<StreamFanoutFigures> {
  const subscribers = opts.subscribers ?? Number(process.env.BENCH_STREAM_SUBSCRIBERS ?? 1_000);
  const seconds = opts.seconds ?? Number(process.env.BENCH_STREAM_SECONDS ?? 5);
  const print = opts.print ?? ((s: string) => console.log(s));
  const dir = mkdtempSync(join(tmpdir(), 'tokex-fanout-'));
  const db = await openDatabase({ sqlitePath: join(dir, 'bench.db') });
  const sequencer = new EngineSequencer({ db, engineOptions: { instruments: DEFAULT_INSTRUMENTS } });
  await sequencer.start();
  const gateway = createInProcessGateway(sequencer);
  const broker = createMemoryStreamBroker();
  const catalog = perpChannels();
  const publisher = createStreamPublisher({ broker, catalog });
  const task = createPerpStreamTask({ engine: () => sequencer.engine, gateway, db, publisher, market: { tickers: async () => [] }, refreshMs: 60_000 });
  await task.start();
  const hub = createStreamHub({ broker, catalog, goneCode: 10003 });
  await hub.start();
  const app = Fastify();
  const endpoint = attachStreamEndpoint(app, {
    paths: ['/ws'], hub, catalog, isSymbol: (s) => sequencer.engine.instrument(s) !== undefined,
    authenticate: async () => ({ account: '0x0' }), authRefusal: () => ({ code: 20006, msg: 'no' }),
    codes: { invalid: 10000, unknownSymbol: 40002, authRequired: 30001, rateLimited: 42900, gone: 10003, unavailable: 50002 },
    limits: { connectionsPerAddress: subscribers + 10, maxBufferedBytes: 64 * 1024 * 1024 }, logger: quiet,
  });
  const url = `${(await app.listen({ host: '127.0.0.1', port: 0 })).replace('http', 'ws')}/ws`;

  const clients = startClients();
  let figures: StreamFanoutFigures;
  try {
    await clients.request({ connect: { url, count: subscribers, subscribe: { op: 'subscribe', channel: 'depth', symbol: 'BTC-USD' } } }, 'ready');
    // The load: the deterministic command stream, its ts the moment of submission.
    const stream = perpCommandStream(7, 'fanout');
    let submitted = 0;
    let running = true;
    const submitter = async () => {
      while (running) {
        const cmd = stream.next().value as EngineCommand;
        await gateway.submit({ ...cmd, ts: Date.now() } as EngineCommand);
        submitted++;
      }
    };
    clients.child.send({ start: true });
    const started = Date.now();
    const workers = Array.from({ length: 64 }, submitter);
    await new Promise((r) => setTimeout(r, seconds * 1_000));
    running = false;
    await Promise.all(workers);
    await drained(clients);
    const ours = await clients.request<ClientResult>({ stop: true, keep: true }, 'result');
    const oursSeconds = (Date.now() - started) / 1000;

    // Capacity: the same frames' data published again as fast as the sockets take them, through the
    // publisher, the broker, the hub and the endpoint, with no engine in front.
    const frames = ours.kept;
    const datas = frames.map((text) => (JSON.parse(text) as { data: { ts: number } }).data);
    clients.child.send({ start: true });
    const capStart = Date.now();
    for (let i = 0; i < datas.length; i++) {
      publisher.publish([{ channel: 'depth', subject: 'BTC-USD', data: { ...datas[i], ts: Date.now() } }]);
      if (i % 4 === 3) await new Promise((r) => setImmediate(r));
    }
    await drained(clients, frames.length * subscribers);
    const capacity = await clients.request<ClientResult>({ stop: true }, 'result');
    const capSeconds = (Date.now() - capStart) / 1000;

    // The bare broadcast of the same frames to as many subscribers.
    await endpoint.close();
    await app.close();
    clients.child.send({ close: true });
    const bareClients = startClients();
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
    await new Promise<void>((r) => wss.once('listening', () => r()));
    wss.on('connection', (ws) => ws.send('ready'));
    const port = (wss.address() as { port: number }).port;
    await bareClients.request({ connect: { url: `ws://127.0.0.1:${port}`, count: subscribers } }, 'ready');
    bareClients.child.send({ start: true });
    const bareStart = Date.now();
    let sent = 0;
    for (const text of frames) {
      // Its send time in place of the order's, so the delay measures the broadcast alone.
      const f = Buffer.from(text.replace(/"ts":\d{13}/g, `"ts":${Date.now()}`));
      for (const ws of wss.clients) ws.send(f);
      let backlog = false;
      for (const ws of wss.clients) if (ws.bufferedAmount > 1 << 20) backlog = true;
      if (backlog || ++sent % 4 === 0) await new Promise((r) => setImmediate(r));
    }
    await drained(bareClients, frames.length * subscribers);
    const bare = await bareClients.request<ClientResult>({ stop: true }, 'result');
    const bareSeconds = (Date.now() - bareStart) / 1000;
    bareClients.child.send({ close: true });
    wss.close();

    const barePerSec = bare.frames / bareSeconds;
    const capPerSec = capacity.frames / capSeconds;
    figures = {
      subscribers,
      streams: { frames: ours.frames, seconds: oursSeconds, perSec: ours.frames / oursSeconds, p50: ours.p50, p99: ours.p99, orders: submitted },
      capacity: { frames: capacity.frames, seconds: capSeconds, perSec: capPerSec, p50: capacity.p50, p99: capacity.p99 },
      bare: { frames: bare.frames, seconds: bareSeconds, perSec: barePerSec, p50: bare.p50, p99: bare.p99 },
      ratio: capPerSec / barePerSec,
    };
  } finally {
    await task.stop();
    await hub.stop();
    await sequencer.stop();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const f = figures;
  print(`\nStream fan-out: ${f.subscribers} subscribers of BTC-USD depth`);
  print(`| | update frames delivered/s | p50 ms | p99 ms | ratio |`);
  print(`| --- | ---: | ---: | ---: | ---: |`);
  print(`| under load: ${f.streams.orders} commands in ${seconds} s, submit to socket (journal commit included) | ${Math.round(f.streams.perSec)} | ${f.streams.p50} | ${f.streams.p99} | |`);
  print(`| tokex fan-out of the same ${f.bare.frames / f.subscribers} frames (publisher → hub → sockets) | ${Math.round(f.capacity.perSec)} | ${f.capacity.p50} | ${f.capacity.p99} | ${f.ratio.toFixed(2)} |`);
  print(`| bare ws broadcast of the same frames | ${Math.round(f.bare.perSec)} | ${f.bare.p50} | ${f.bare.p99} | 1 |`);
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  runStreamFanoutBench().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
