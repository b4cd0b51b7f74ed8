/**
 * A local HTTP server speaking Pyth Hermes' price stream as documented (docs.pyth.network, API
 * reference "GET /v2/updates/price/stream"; the handler is apps/hermes/server/src/api/rest/v2/sse.rs
 * in pyth-network/pyth-crosschain): `Authorization: Bearer <key>` checked (401 without, as the
 * upgraded Hermes answers), `ids[]` validated (404 `Price ids not found: …`), then a
 * `text/event-stream` of `data:{json}` events whose `parsed` array carries every feed asked for,
 * keep-alive comments and `event:error` events. A test writes the events with `update`, `event`,
 * `keepAlive` and `raw`; it waits on the server's promises, never on sleeps.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAKE_PYTH_KEY = 'pyth-TEST-key-7f3a9c-do-not-log';

/** Feed ids of the demo stocks (the real `Equity.US.<TICKER>/USD` ids). */
export const FEED = {
  AAPL: '49f6b65cb1de6b10eaf75e7c03ca029c306d0357e91b5311b175084a5ad55688',
  MSFT: 'd0ca23c1cc005e004ccf1db5bf76aeb6a49218f43dac3d4b275e92de12ded4d1',
  TSLA: '16dad506d7db8da01c87581c87ca897a012a153557d4d578c3b9c9e1bc0632f1',
  NVDA: 'b1073854ed24cbc755dc527418f52b7d271f6cc967bbf8d8129112b18860a593',
  SPY: '19e09bb805456ada3979a7d1cbb4b6d63babc3a0f8e8a9509f68afa5c4c11cd5',
} as const;

export interface FeedPrice {
  id: string;
  /** The integer mantissa, as Hermes writes it (a string). */
  price: string;
  conf: string;
  expo: number;
  /** Unix seconds. */
  publishTime: number;
  slot?: number;
}

/** One parsed feed of an update, in the documented shape (ema_price and metadata included). */
export function parsedFeed(f: FeedPrice): Record<string, unknown> {
  const p = { conf: f.conf, expo: f.expo, price: f.price, publish_time: f.publishTime };
  return {
    id: f.id,
    price: p,
    ema_price: { ...p },
    metadata: { slot: f.slot ?? f.publishTime * 3, proof_available_time: f.publishTime + 1, prev_publish_time: f.publishTime - 1 },
  };
}

/** The JSON of one update event (`binary` and `parsed`), written as Hermes' json_data writes it. */
export function updateJson(...feeds: FeedPrice[]): string {
  return JSON.stringify({ binary: { encoding: 'hex', data: ['504e41550100000003b8'] }, parsed: feeds.map(parsedFeed) });
}

export type AuthAnswer = 'ok' | { status: number; body: string };

export interface HermesConnection {
  index: number;
  /** The request's path and query, as sent. */
  url: string;
  /** The `ids[]` asked for. */
  ids: string[];
  headers: IncomingMessage['headers'];
  /** Status answered. */
  status: number;
  /** Writes raw text to the stream (events must end with a blank line). */
  raw(text: string): void;
  /** A `data:` event with the update of these feeds. */
  update(...feeds: FeedPrice[]): void;
  /** An event with a given type and data (`event:error`). */
  event(type: string, data: string): void;
  /** The keep-alive comment axum sends every 15 s. */
  keepAlive(): void;
  /** Ends the stream (as Hermes does after 24 hours). */
  end(): void;
  /** Resolves when the client has gone (or the stream ended). */
  closed: Promise<void>;
  /** Whether `closed` has resolved. */
  readonly gone: boolean;
}

export interface FakeHermes {
  /** The base URL (`http://127.0.0.1:<port>/hermes`), as PYTH_HERMES_URL takes it. */
  url: string;
  connections: HermesConnection[];
  nextConnection(): Promise<HermesConnection>;
  /** The latest streaming (200) connection, waiting for one if there is none. */
  streamingConnection(): Promise<HermesConnection>;
  close(): Promise<void>;
}

export interface FakeHermesOptions {
  key?: string;
  /** Feed ids the server knows. Default every id of FEED. */
  known?: readonly string[];
  /** Per connection (0-based): what to answer a correctly authenticated request. Default ok. */
  answer?: (index: number) => AuthAnswer;
}

export async function startFakeHermes(opts: FakeHermesOptions = {}): Promise<FakeHermes> {
  const key = opts.key ?? FAKE_PYTH_KEY;
  const known = new Set(opts.known ?? Object.values(FEED));
  const connections: HermesConnection[] = [];
  const waiting: ((c: HermesConnection) => void)[] = [];
  const open = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    const index = connections.length;
    const u = new URL(req.url ?? '/', 'http://localhost');
    const ids = u.searchParams.getAll('ids[]');
    let closedResolve!: () => void;
    let gone = false;
    const closed = new Promise<void>((resolve) => (closedResolve = resolve));
    res.on('close', () => {
      gone = true;
      open.delete(res);
      closedResolve();
    });
    open.add(res);
    const write = (text: string): void => {
      if (!res.writableEnded) res.write(text);
    };
    const conn: HermesConnection = {
      index,
      url: req.url ?? '',
      ids,
      headers: req.headers,
      status: 200,
      raw: write,
      update: (...feeds) => write(`data:${updateJson(...feeds)}\n\n`),
      event: (type, data) => write(`event:${type}\ndata:${data}\n\n`),
      keepAlive: () => write(':\n\n'),
      end: () => res.end(),
      closed,
      get gone() {
        return gone;
      },
    };
    connections.push(conn);
    const refuse = (status: number, body: string): void => {
      conn.status = status;
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(body);
    };
    if (u.pathname !== '/hermes/v2/updates/price/stream') refuse(404, 'Not Found');
    else if (req.headers.authorization !== `Bearer ${key}`) refuse(401, 'Unauthorized');
    else if (ids.length === 0) refuse(400, 'Failed to deserialize query string: missing field `ids[]`');
    else {
      const unknown = ids.filter((id) => !known.has(id.replace(/^0x/, '').toLowerCase()));
      const answer = opts.answer?.(index) ?? 'ok';
      if (unknown.length > 0) refuse(404, `Price ids not found: ${unknown.join(', ')}`);
      else if (answer !== 'ok') refuse(answer.status, answer.body);
      else {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.flushHeaders();
      }
    }
    waiting.splice(0).forEach((resolve) => resolve(conn));
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const port = (server.address() as AddressInfo).port;
  const nextConnection = () => new Promise<HermesConnection>((resolve) => waiting.push(resolve));
  return {
    url: `http://127.0.0.1:${port}/hermes`,
    connections,
    nextConnection,
    async streamingConnection() {
      for (;;) {
        const last = connections.at(-1);
        if (last !== undefined && last.status === 200 && !last.gone) return last;
        await nextConnection();
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
