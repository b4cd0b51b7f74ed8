/**
 * A venue's own ops on the shared stream endpoint (src/streams/stream-endpoint.ts, `opts.ops`): their
 * own lane per connection, so an op waiting on something slow never holds up a ping; ops answered one
 * at a time in arrival order, each after the messages before it (an `auth` just before included);
 * at most `opsQueued` waiting, the next refused at once; larger frames for an op only once `auth` was
 * sent; and an endpoint without ops (the stock API's) exactly as before. Real sockets, a real hub.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/lib/logger.ts';
import { perpChannels } from '../../src/perp/streams/perp-stream-channels.ts';
import { attachStreamEndpoint, type StreamEndpoint, type StreamOp } from '../../src/streams/stream-endpoint.ts';
import { createMemoryStreamBroker } from '../../src/streams/stream-broker.ts';
import { createStreamHub, type StreamHub } from '../../src/streams/stream-hub.ts';
import { openSocket, type TestSocket } from '../support/ws-client.ts';
import { until } from '../support/poll.ts';

const CODES = { invalid: 1, unknownSymbol: 2, authRequired: 3, rateLimited: 4, gone: 5, unavailable: 6 };
const QUEUED = 3;

interface Session {
  account: string;
}

/** An op whose answers wait until the test releases them, recording what each saw. */
function gatedOp() {
  const started: Array<{ n: unknown; account: string | undefined }> = [];
  let open!: () => void;
  let gate = new Promise<void>((resolve) => (open = resolve));
  const op: StreamOp<Session> = {
    async handle(msg, { id, session, turn }) {
      // Nothing checked before its turn: the op holds the lane until done, one at a time.
      await turn;
      started.push({ n: msg.n, account: session?.account });
      if (msg.fail === true) throw new Error('op failed');
      await gate;
      return { type: 'result', ...(id !== undefined ? { id } : {}), n: msg.n, account: session?.account ?? null };
    },
    refused: (id, code, msg) => ({ type: 'result', id, code, msg }),
  };
  return {
    op,
    started,
    release() {
      open();
    },
    close() {
      gate = new Promise<void>((resolve) => (open = resolve));
    },
  };
}

describe('stream endpoint: venue ops', () => {
  let hub: StreamHub;
  const apps: FastifyInstance[] = [];
  const endpoints: StreamEndpoint[] = [];
  const sockets: TestSocket[] = [];

  const serve = async (ops?: Record<string, StreamOp<Session>>) => {
    const app = Fastify();
    const endpoint = attachStreamEndpoint<Session>(app, {
      paths: ['/ws'],
      hub,
      catalog: perpChannels(),
      isSymbol: () => true,
      // `auth` succeeds with the frame's apiKey as the account, or fails with code 7 on "bad".
      async authenticate(frame) {
        if (frame.apiKey === 'bad') throw new Error('bad key');
        return { account: String(frame.apiKey) };
      },
      authRefusal: () => ({ code: 7, msg: 'auth refused' }),
      codes: CODES,
      limits: { opsQueued: QUEUED, maxFrameBytes: 1_024, opFrameBytes: 8_192 },
      logger: createLogger({ level: 'silent' }),
      ...(ops ? { ops } : {}),
    });
    apps.push(app);
    endpoints.push(endpoint);
    await app.listen({ host: '127.0.0.1', port: 0 });
    return `ws://127.0.0.1:${(app.server.address() as { port: number }).port}/ws`;
  };
  const open = async (url: string) => {
    const s = await openSocket(url);
    sockets.push(s);
    return s;
  };

  beforeAll(async () => {
    hub = createStreamHub({ broker: createMemoryStreamBroker(), catalog: perpChannels(), goneCode: CODES.gone });
    await hub.start();
  });
  afterAll(async () => {
    for (const s of sockets) s.close();
    for (const e of endpoints) await e.close();
    for (const a of apps) await a.close();
    await hub.stop();
  });

  it('an op waiting never holds up a ping; ops answer in arrival order, after the auth before them; past the queue, refused at once', async () => {
    const slow = gatedOp();
    const s = await open(await serve({ slow: slow.op }));
    // Before any auth the op runs without a session.
    s.send({ op: 'slow', id: 'anon', n: 0 });
    s.send({ op: 'ping', id: 'p0' });
    await s.next((f) => f.type === 'pong' && f.id === 'p0');
    s.send({ op: 'auth', id: 'a', apiKey: '0xabc' });
    for (const n of [1, 2, 3]) s.send({ op: 'slow', id: `s${n}`, n });
    // 4 waiting (anon, s1, s2 and s3) with room for 3: s3 is refused at once, the others wait.
    expect(await s.next((f) => f.type === 'result' && f.id === 's3')).toEqual({
      type: 'result', id: 's3', code: CODES.rateLimited, msg: `more than ${QUEUED} slow messages waiting on this connection: wait for their results`,
    });
    s.send({ op: 'ping', id: 'p1' });
    await s.next((f) => f.type === 'pong' && f.id === 'p1');
    expect(s.frames.filter((f) => f.type === 'result').map((f) => f.id)).toEqual(['s3']);
    expect(s.frames.some((f) => f.type === 'authenticated')).toBe(true);
    // One at a time: only the first has started.
    expect(slow.started).toEqual([{ n: 0, account: undefined }]);

    slow.release();
    await s.next((f) => f.type === 'result' && f.id === 's2');
    const results = s.frames.filter((f) => f.type === 'result' && f.id !== 's3');
    expect(results.map((f) => [f.id, (f as { account?: string | null }).account])).toEqual([
      ['anon', null],
      ['s1', '0xabc'],
      ['s2', '0xabc'],
    ]);
    expect(slow.started.map((x) => x.n)).toEqual([0, 1, 2]);
  });

  it('ops check at once, in parallel, but apply in arrival order: one failing its checks lets no later one overtake', async () => {
    const log: string[] = [];
    const gates = new Map<number, () => void>();
    const op: StreamOp<Session> = {
      async handle(msg, { id, turn, ordered }) {
        const n = Number(msg.n);
        log.push(`check ${n}`);
        // Each op's checks wait for the test, so it decides the order they finish in.
        await new Promise<void>((resolve) => gates.set(n, resolve));
        if (msg.fail === true) throw new Error('bad signature');
        await turn;
        log.push(`apply ${n}`);
        ordered();
        return { type: 'result', id, n };
      },
      refused: (id, code, msg) => ({ type: 'result', id, code, msg }),
    };
    const s = await open(await serve({ ordered: op }));
    s.send({ op: 'ordered', id: 'o1', n: 1 });
    s.send({ op: 'ordered', id: 'o2', n: 2, fail: true });
    s.send({ op: 'ordered', id: 'o3', n: 3 });
    s.send({ op: 'ping', id: 'p' });
    await s.next((f) => f.type === 'pong' && f.id === 'p');
    await until(async () => gates.size, (n) => n === 3);
    // All three checking before any applied.
    expect(log).toEqual(['check 1', 'check 2', 'check 3']);
    // The third's and the second's checks end first: neither may apply before the first.
    gates.get(3)!();
    gates.get(2)!();
    s.send({ op: 'ping', id: 'p2' });
    await s.next((f) => f.type === 'pong' && f.id === 'p2');
    expect(log).toEqual(['check 1', 'check 2', 'check 3']);
    gates.get(1)!();
    await s.next((f) => f.type === 'result' && f.id === 'o3');
    expect(log).toEqual(['check 1', 'check 2', 'check 3', 'apply 1', 'apply 3']);
    expect(s.frames.filter((f) => f.type === 'result' || f.type === 'error').map((f) => [f.type, f.id])).toEqual([
      ['result', 'o1'],
      ['error', 'o2'],
      ['result', 'o3'],
    ]);
  });

  it('a failing op answers an error frame with its id; a bad id is refused before the op runs', async () => {
    const slow = gatedOp();
    slow.release();
    const s = await open(await serve({ slow: slow.op }));
    s.send({ op: 'slow', id: 'x', fail: true });
    expect(await s.next((f) => f.type === 'error' && f.id === 'x')).toEqual({ type: 'error', id: 'x', code: CODES.unavailable, msg: 'internal error' });
    s.send({ op: 'slow', id: '', n: 9 });
    expect(await s.next((f) => f.type === 'error' && f.code === CODES.invalid)).toMatchObject({ msg: 'id: a string of 1 to 64 characters' });
    expect(slow.started.map((x) => x.n)).toEqual([undefined]);
    s.send({ op: 'nope', id: 'n' });
    expect(await s.next((f) => f.type === 'error' && f.id === 'n')).toMatchObject({ msg: 'op: must be one of subscribe, unsubscribe, auth, ping, slow' });
  });

  it('a frame above maxFrameBytes: an op once auth was sent, nothing else (close 1009)', async () => {
    const slow = gatedOp();
    slow.release();
    const url = await serve({ slow: slow.op });
    const big = 'x'.repeat(2_000);

    const early = await open(url);
    early.send({ op: 'slow', id: 'big', pad: big });
    expect(await early.closed).toEqual({ code: 1009, reason: 'message too big' });

    const s = await open(url);
    s.send({ op: 'auth', id: 'a', apiKey: '0xdef' });
    s.send({ op: 'slow', id: 'big', n: 1, pad: big });
    expect(await s.next((f) => f.type === 'result' && f.id === 'big')).toMatchObject({ n: 1, account: '0xdef' });
    // Not for the built-in ops, and never above opFrameBytes.
    s.send({ op: 'ping', id: 'big', pad: big });
    expect(await s.closed).toEqual({ code: 1009, reason: 'message too big' });
    const huge = await open(url);
    huge.send({ op: 'auth', id: 'a', apiKey: '0xdef' });
    huge.send({ op: 'slow', id: 'huge', pad: 'x'.repeat(9_000) });
    expect((await huge.closed).code).toBe(1009);
  });

  it('without ops (the stock endpoint): the op is unknown and the frame limit is maxFrameBytes, as before', async () => {
    const url = await serve();
    const s = await open(url);
    s.send({ op: 'slow', id: 'q' });
    expect(await s.next((f) => f.type === 'error' && f.id === 'q')).toEqual({ type: 'error', id: 'q', code: CODES.invalid, msg: 'op: must be one of subscribe, unsubscribe, auth, ping' });
    s.send({ op: 'auth', id: 'a', apiKey: '0x1' });
    await s.next((f) => f.type === 'authenticated');
    s.send({ op: 'slow', id: 'big', pad: 'x'.repeat(2_000) });
    expect((await s.closed).code).toBe(1009);
  });
});
