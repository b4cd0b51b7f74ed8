/**
 * The SDK's stream client against the real perpetual stream endpoint (src/perp/streams, the hub, an
 * in-process broker and publisher, the real API-key check on SQLite), through a TCP proxy the test
 * can cut and hold: the real `auth` signature is accepted, a cut connection resumes the private
 * stream with `since` and gets what was published meanwhile exactly once, the public stream gets a
 * fresh snapshot, an expired `since` (10003) and a new epoch give flagged fresh snapshots.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PerpStreamClient, type SnapshotInfo } from '../../packages/sdk/src/stream-client.ts';
import { createMemoryNonceStore } from '../../src/auth/nonce-store.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { perpChannels } from '../../src/perp/streams/perp-stream-channels.ts';
import { attachPerpStreams } from '../../src/perp/streams/perp-stream-endpoint.ts';
import type { StreamEndpoint } from '../../src/streams/stream-endpoint.ts';
import { createMemoryStreamBroker } from '../../src/streams/stream-broker.ts';
import { createStreamHub, type StreamHub } from '../../src/streams/stream-hub.ts';
import { createStreamPublisher, type StreamPublisher } from '../../src/streams/stream-publisher.ts';
import { HARNESS_CHAIN_ID, perpHarnessVariants, type PerpHarness } from '../support/perp-api-harness.ts';
import { Recorder } from './stream-test-server.ts';

const SYMBOL = 'BTC-USD';
const ACCOUNT = '0x00000000000000000000000000000000000000c1';
/** Updates a private stream keeps here (the memory broker trims above twice this). */
const RETAINED = 3;

/** A TCP proxy in front of the API: `cut()` kills every connection, `hold()` parks new ones until `release()`. */
class CuttableProxy {
  readonly sockets = new Set<Socket>();
  #held: Array<() => void> | undefined;
  accepted = 0;

  private constructor(
    readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<CuttableProxy> {
    let proxy!: CuttableProxy;
    const server = createServer((down) => {
      proxy.accepted += 1;
      proxy.sockets.add(down);
      down.on('error', () => down.destroy());
      down.on('close', () => proxy.sockets.delete(down));
      const join = () => {
        if (down.destroyed) return;
        const up = connect(targetPort, '127.0.0.1');
        proxy.sockets.add(up);
        const kill = () => {
          down.destroy();
          up.destroy();
        };
        up.on('error', kill);
        up.on('close', () => {
          proxy.sockets.delete(up);
          kill();
        });
        down.on('close', kill);
        down.pipe(up);
        up.pipe(down);
      };
      if (proxy.#held) proxy.#held.push(join);
      else join();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new CuttableProxy(server, (server.address() as { port: number }).port);
    return proxy;
  }

  hold(): void {
    this.#held ??= [];
  }
  release(): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const join of held) join();
  }
  cut(): void {
    for (const s of this.sockets) s.destroy();
  }
  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe('stream client against the real perp stream endpoint', () => {
  let harness: PerpHarness;
  let app: FastifyInstance;
  let endpoint: StreamEndpoint;
  let hub: StreamHub;
  let publisher: StreamPublisher;
  let proxy: CuttableProxy;
  let key: { apiKey: string; apiSecret: string };

  beforeAll(async () => {
    harness = await perpHarnessVariants()[0].start();
    key = await harness.key({ permissions: ['READ'], userAddress: ACCOUNT });
    const broker = createMemoryStreamBroker({ retained: RETAINED });
    const catalog = perpChannels();
    publisher = createStreamPublisher({ broker, catalog });
    hub = createStreamHub({ broker, catalog, goneCode: 10003 });
    await hub.start();
    app = Fastify();
    endpoint = attachPerpStreams(app, {
      hub,
      keys: harness.keys,
      nonces: createMemoryNonceStore(),
      chainId: HARNESS_CHAIN_ID,
      isSymbol: (s) => s === SYMBOL,
      logger: createLogger({ level: 'silent' }),
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    proxy = await CuttableProxy.start((app.server.address() as { port: number }).port);
  });
  afterAll(async () => {
    await proxy?.stop();
    await endpoint?.close();
    await app?.close();
    await hub?.stop();
    await harness?.stop();
  });

  it('auth, snapshots and updates; a cut connection resumes and replays exactly once; expired since and a new epoch give fresh snapshots', async () => {
    await publisher.start([{ channel: 'depth', subject: SYMBOL, data: { bids: [['100', '1']], asks: [['101', '1']], ts: 1 } }]);
    const epoch1 = publisher.epoch;
    const client = new PerpStreamClient({ url: `ws://127.0.0.1:${proxy.port}/v4/public/ws`, apiKey: key.apiKey, apiSecret: key.apiSecret, reconnect: { baseMs: 20 } });
    try {
      const accounts: string[] = [];
      client.on('authenticated', (a) => accounts.push(a));
      const reconnecting: number[] = [];
      client.on('reconnecting', (r) => reconnecting.push(r.attempt));
      const depth = new Recorder();
      const orders = new Recorder();
      const depthSub = client.subscribe('depth', { symbol: SYMBOL }, depth.handlers());
      const ordersSub = client.subscribe('orders', {}, orders.handlers());
      await client.connect();
      await Promise.all([depthSub.ready, ordersSub.ready]);
      expect(accounts).toEqual([ACCOUNT]);

      const base = epoch1 * 1000;
      const order = (n: number, status = 'NEW') => ({ orderId: String(n), symbol: SYMBOL, status });
      const pubOrder = (n: number, status?: string) => publisher.publish([{ channel: 'orders', subject: ACCOUNT, data: order(n, status) }]);
      pubOrder(1);
      publisher.publish([{ channel: 'depth', subject: SYMBOL, data: { bids: [['100', '2']], asks: [], ts: 2 } }]);
      pubOrder(2);
      await orders.until((e) => e.seq === base + 2);
      await depth.until((e) => e.seq === base + 1);

      // ---- cut: two order changes and a book change while the client is away
      proxy.hold();
      const away = new Promise<void>((resolve) => client.on('reconnecting', () => resolve()));
      proxy.cut();
      await away;
      pubOrder(1, 'FILLED');
      pubOrder(3);
      publisher.publish([{ channel: 'depth', subject: SYMBOL, data: { bids: [], asks: [['101', '0'], ['102', '5']], ts: 3 } }]);
      proxy.release();
      await orders.until((e) => e.seq === base + 4);
      await depth.until((e) => e.kind === 'snapshot' && e.info.reason === 'reconnect');
      pubOrder(4);
      await orders.until((e) => e.seq === base + 5);

      expect(orders.all).toEqual([
        { kind: 'snapshot', seq: base, data: [], info: { reason: 'initial', continuityLost: false, previousSeq: undefined } },
        { kind: 'update', seq: base + 1, data: order(1) },
        { kind: 'update', seq: base + 2, data: order(2) },
        { kind: 'resume', seq: base + 2 },
        { kind: 'update', seq: base + 3, data: order(1, 'FILLED') },
        { kind: 'update', seq: base + 4, data: order(3) },
        { kind: 'update', seq: base + 5, data: order(4) },
      ]);
      expect(depth.all).toEqual([
        { kind: 'snapshot', seq: base, data: { bids: [['100', '1']], asks: [['101', '1']], ts: 1 }, info: { reason: 'initial', continuityLost: false, previousSeq: undefined } },
        { kind: 'update', seq: base + 1, data: { bids: [['100', '2']], asks: [], ts: 2 } },
        {
          kind: 'snapshot',
          seq: base + 2,
          data: { bids: [['100', '2']], asks: [['102', '5']], ts: 3 },
          info: { reason: 'reconnect', continuityLost: true, previousSeq: base + 1 },
        },
      ]);
      expect(accounts).toEqual([ACCOUNT, ACCOUNT]);

      // ---- away for longer than the server retains: a fresh snapshot, flagged
      proxy.hold();
      const away2 = new Promise<void>((resolve) => client.on('reconnecting', () => resolve()));
      proxy.cut();
      await away2;
      for (let n = 5; n < 5 + RETAINED * 2 + 1; n++) pubOrder(n);
      const lastSeq = base + 5 + RETAINED * 2 + 1;
      proxy.release();
      const afterExpiry = await orders.until((e) => e.kind === 'snapshot' && e.seq === lastSeq);
      const fresh = afterExpiry.at(-1)!;
      expect(fresh.info).toEqual<SnapshotInfo>({ reason: 'not-retained', continuityLost: true, previousSeq: base + 5 });
      // Open orders now: 2, 3, 4 and every order published while away.
      expect((fresh.data as Array<{ orderId: string }>).map((o) => o.orderId).sort((a, b) => Number(a) - Number(b))).toEqual(
        ['2', '3', '4', ...Array.from({ length: RETAINED * 2 + 1 }, (_, i) => String(5 + i))],
      );
      expect(afterExpiry.filter((e) => e.kind === 'update' && e.seq > base + 5)).toEqual([]);

      // ---- the publisher starts a new epoch: both streams are restarted by the server
      const ordersBefore = orders.all.length;
      const depthBefore = depth.all.length;
      await publisher.start([{ channel: 'depth', subject: SYMBOL, data: { bids: [['99', '7']], asks: [], ts: 4 } }]);
      const base2 = publisher.epoch * 1000;
      expect(base2).toBeGreaterThan(lastSeq);
      await orders.until((e) => e.kind === 'snapshot' && e.seq === base2);
      await depth.until((e) => e.kind === 'snapshot' && e.seq === base2);
      expect(orders.all.slice(ordersBefore)).toEqual([{ kind: 'snapshot', seq: base2, data: [], info: { reason: 'restarted', continuityLost: true, previousSeq: lastSeq } }]);
      expect(depth.all.slice(depthBefore)).toEqual([
        { kind: 'snapshot', seq: base2, data: { bids: [['99', '7']], asks: [], ts: 4 }, info: { reason: 'restarted', continuityLost: true, previousSeq: base + 2 } },
      ]);
      pubOrder(100);
      await orders.until((e) => e.seq === base2 + 1);
      expect(orders.all.at(-1)).toEqual({ kind: 'update', seq: base2 + 1, data: order(100) });
      expect(reconnecting).toEqual([1, 2]);
      expect(proxy.accepted).toBe(3);
    } finally {
      await client.close();
    }
  });

  it('many streams opened at once with one key all authenticate (no two auths share a timestamp, so none is a replay)', async () => {
    const url = `ws://127.0.0.1:${(app.server.address() as { port: number }).port}/v4/public/ws`;
    // What a fast host does: every connection signs its auth in the same millisecond. A frozen clock
    // (clockOffsetMs cancelling Date.now()) makes that certain here rather than a matter of speed.
    const frozen = Date.now();
    const clients = Array.from({ length: 32 }, () => new PerpStreamClient({ url, apiKey: key.apiKey, apiSecret: key.apiSecret, clockOffsetMs: () => frozen - Date.now(), reconnect: { maxAttempts: 1 } }));
    try {
      const accounts: string[] = [];
      for (const c of clients) c.on('authenticated', (a) => accounts.push(a));
      const outcomes = await Promise.allSettled(clients.map((c) => c.connect()));
      expect(outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason))).toEqual([]);
      expect(accounts).toEqual(Array.from({ length: 32 }, () => ACCOUNT));
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }

    // The server's replay rule stands: the same auth frame twice (one timestamp, one signature) is refused the second time.
    const { WebSocket } = await import('ws');
    const { signPerpStreamAuth, createHmacSigner } = await import('../../packages/sdk/src/stream-sign.ts');
    // A second past the clients' stamps above (frozen + 0..31 ms): a stamp of theirs would be refused
    // as their replay, which on a fast host is where Date.now() still is.
    const ts = Math.max(Date.now(), frozen + 1_000);
    const frame = JSON.stringify({ op: 'auth', id: 'auth', apiKey: key.apiKey, ts, sign: await signPerpStreamAuth(createHmacSigner(key.apiSecret), ts) });
    const opened = (ws: InstanceType<typeof WebSocket>) =>
      new Promise<void>((resolve, reject) => {
        ws.once('error', reject);
        ws.once('open', () => resolve());
      });
    const answerOf = (ws: InstanceType<typeof WebSocket>) =>
      new Promise<{ type: string; code?: number }>((resolve) => {
        ws.once('message', (raw) => resolve(JSON.parse(raw.toString())));
        ws.send(frame);
      });
    const first = new WebSocket(url);
    const second = new WebSocket(url);
    try {
      await Promise.all([opened(first), opened(second)]);
      expect((await answerOf(first)).type).toBe('authenticated');
      expect(await answerOf(second)).toMatchObject({ type: 'error', code: 20007 });
    } finally {
      first.close();
      second.close();
    }
  });
});
