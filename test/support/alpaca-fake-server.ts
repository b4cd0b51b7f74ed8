/**
 * A local WebSocket server speaking Alpaca's market-data stream v2 as documented
 * (docs.alpaca.markets "WebSocket Stream" / "Real-time Stock Data"): the `connected` greeting, the
 * auth message, error frames that leave the socket open (as the real stream does), subscription
 * confirmations carrying the whole current set, and data frames of the documented shape, which a
 * test writes with `quote`, `trade` and `frame`. Tests wait on its promises, never on sleeps.
 */
import { WebSocketServer, type WebSocket } from 'ws';

export const FAKE_ALPACA_KEY = 'PKTEST0000000000000001';
export const FAKE_ALPACA_SECRET = 'sEcReT-9c1f0d7e4b2a-do-not-log';

/** RFC 3339 with nanoseconds: `ms` plus `nanos` (0 to 999 999) below the millisecond. */
export const iso = (ms: number, nanos = 0): string => new Date(ms).toISOString().replace('Z', '') + String(nanos).padStart(6, '0') + 'Z';

/** A quote message as the stream sends it (prices written as JSON numbers, as given). */
export const quote = (symbol: string, bp: string, ap: string, ms: number, nanos = 0): string =>
  `{"T":"q","S":"${symbol}","bx":"V","bp":${bp},"bs":1,"ax":"V","ap":${ap},"as":4,"t":"${iso(ms, nanos)}","c":["R"],"z":"C"}`;

/** A trade message as the stream sends it. */
export const trade = (symbol: string, p: string, ms: number, id = 96921, size = 100): string =>
  `{"T":"t","i":${id},"S":"${symbol}","x":"V","p":${p},"s":${size},"t":"${iso(ms)}","c":["@"],"z":"C"}`;

/** A frame: every frame of the stream is a JSON array. */
export const frame = (...messages: string[]): string => `[${messages.join(',')}]`;

export type AuthAnswer = 'ok' | { code: number; msg: string };

export interface FakeConnection {
  index: number;
  socket: WebSocket;
  /** Client messages, parsed. */
  received: Record<string, unknown>[];
  /** Resolves once the subscription has been confirmed to the client. */
  subscribed: Promise<void>;
  /** Resolves when the socket has closed (either side). */
  closed: Promise<void>;
  send(text: string | Buffer): void;
}

export interface FakeAlpaca {
  /** `ws://127.0.0.1:<port>/v2/iex`. */
  url: string;
  connections: FakeConnection[];
  /** The next connection to arrive (not one already there). */
  nextConnection(): Promise<FakeConnection>;
  /** The latest connection once it is subscribed (waits for one when there is none yet). */
  subscribedConnection(): Promise<FakeConnection>;
  close(): Promise<void>;
}

export interface FakeAlpacaOptions {
  key?: string;
  secret?: string;
  /** Per connection (0-based): answer to a correct auth. Default ok. */
  authAnswer?: (index: number) => AuthAnswer;
  /** Per connection: send the `connected` greeting. Default true. */
  greet?: (index: number) => boolean;
  /** Per connection: answer pings. Default true. */
  pong?: (index: number) => boolean;
}

export async function startFakeAlpaca(opts: FakeAlpacaOptions = {}): Promise<FakeAlpaca> {
  const key = opts.key ?? FAKE_ALPACA_KEY;
  const secret = opts.secret ?? FAKE_ALPACA_SECRET;
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, autoPong: false });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  const connections: FakeConnection[] = [];
  const waiting: ((c: FakeConnection) => void)[] = [];
  wss.on('connection', (socket) => {
    const index = connections.length;
    const received: Record<string, unknown>[] = [];
    let authed = false;
    const subs = { trades: new Set<string>(), quotes: new Set<string>(), bars: new Set<string>() };
    let markSubscribed!: () => void;
    const conn: FakeConnection = {
      index,
      socket,
      received,
      subscribed: new Promise((resolve) => (markSubscribed = resolve)),
      closed: new Promise((resolve) => socket.once('close', () => resolve())),
      send: (text) => socket.send(text, { binary: Buffer.isBuffer(text) }),
    };
    connections.push(conn);
    const reply = (messages: object[]): void => socket.send(JSON.stringify(messages));
    const error = (code: number, msg: string): void => reply([{ T: 'error', code, msg }]);
    if (opts.pong?.(index) ?? true) socket.on('ping', (data) => socket.pong(data));
    socket.on('message', (data) => {
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(String(data)) as Record<string, unknown>;
      } catch {
        return error(400, 'invalid syntax');
      }
      received.push(msg);
      if (msg.action === 'auth') {
        if (authed) return error(403, 'already authenticated');
        if (msg.key !== key || msg.secret !== secret) return error(402, 'auth failed');
        const answer = opts.authAnswer?.(index) ?? 'ok';
        if (answer !== 'ok') return error(answer.code, answer.msg);
        authed = true;
        return reply([{ T: 'success', msg: 'authenticated' }]);
      }
      if (msg.action === 'subscribe') {
        if (!authed) return error(401, 'not authenticated');
        const channels = (['trades', 'quotes', 'bars'] as const).filter((c) => msg[c] !== undefined);
        // Observed: an empty list, no channel at all or a non-list is 400 invalid syntax.
        const bad = channels.length === 0 || channels.some((c) => !Array.isArray(msg[c]) || (msg[c] as unknown[]).length === 0);
        if (bad) return error(400, 'invalid syntax');
        for (const c of channels) for (const s of msg[c] as string[]) subs[c].add(s);
        reply([{ T: 'subscription', trades: [...subs.trades], quotes: [...subs.quotes], bars: [...subs.bars] }]);
        return markSubscribed();
      }
      error(400, 'invalid syntax');
    });
    if (opts.greet?.(index) ?? true) reply([{ T: 'success', msg: 'connected' }]);
    waiting.splice(0).forEach((resolve) => resolve(conn));
  });
  const port = (wss.address() as { port: number }).port;
  const nextConnection = () => new Promise<FakeConnection>((resolve) => waiting.push(resolve));
  return {
    url: `ws://127.0.0.1:${port}/v2/iex`,
    connections,
    nextConnection,
    async subscribedConnection() {
      const conn = connections.at(-1) ?? (await nextConnection());
      await conn.subscribed;
      return conn;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => resolve());
      }),
  };
}

// Not Alpaca's alone; kept importable from here for the tests that take it with the server.
export { tickLog } from './quote-source-harness.ts';
