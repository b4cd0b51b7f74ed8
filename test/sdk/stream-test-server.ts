/**
 * A scripted stream server for the SDK stream client's tests: a real `ws` WebSocketServer on a free
 * port of 127.0.0.1 that records every frame each connection sends and lets the test answer (or
 * misbehave) frame by frame. Waits are on frames and closes, never on fixed times.
 */
import { WebSocketServer, type WebSocket } from 'ws';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { StreamClient } from '../../packages/sdk/src/stream-client.ts';

export type Frame = Record<string, any>;

/** Resolves when `match` holds for an item of a growing list, from index `from` on. */
class Waitable<T> {
  readonly items: T[] = [];
  #waiters = new Set<() => void>();

  push(item: T): void {
    this.items.push(item);
    for (const w of [...this.#waiters]) w();
  }

  next(match: (item: T) => boolean, opts: { from?: number; timeoutMs?: number; what?: string } = {}): Promise<T> {
    const timeoutMs = opts.timeoutMs ?? 10_000;
    let i = opts.from ?? 0;
    return new Promise((resolve, reject) => {
      const check = () => {
        for (; i < this.items.length; i++) {
          if (match(this.items[i])) {
            this.#waiters.delete(check);
            clearTimeout(timer);
            resolve(this.items[i]);
            return;
          }
        }
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`timed out waiting for ${opts.what ?? 'an item'}; last: ${JSON.stringify(this.items.slice(-5))}`));
      }, timeoutMs);
      this.#waiters.add(check);
      check();
    });
  }
}

export class ServerConnection {
  readonly frames = new Waitable<Frame>();
  readonly closed: Promise<{ code: number; reason: string }>;

  constructor(
    readonly ws: WebSocket,
    /** The upgrade's path and query. */
    readonly url = '',
  ) {
    ws.on('message', (raw) => this.frames.push(JSON.parse(raw.toString()) as Frame));
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  #taken = new Set<Frame>();
  /** The first frame not taken yet that matches (waiting for it), now taken. */
  async take(match: (f: Frame) => boolean = () => true, what = 'a client frame'): Promise<Frame> {
    const f = await this.frames.next((x) => !this.#taken.has(x) && match(x), { what });
    this.#taken.add(f);
    return f;
  }

  /** Frames not taken yet, pings left out. */
  untaken(): Frame[] {
    return this.frames.items.filter((f) => !this.#taken.has(f) && f.op !== 'ping');
  }

  /** The first untaken frame of that op. */
  takeOp(op: string, extra: (f: Frame) => boolean = () => true): Promise<Frame> {
    return this.take((f) => f.op === op && extra(f), `op ${op}`);
  }

  send(frame: Frame): void {
    this.ws.send(JSON.stringify(frame));
  }

  /** Drops the TCP connection without a closing handshake, as a crashed server or a cut network would. */
  drop(): void {
    this.ws.terminate();
  }
}

export class ScriptedStreamServer {
  readonly connections = new Waitable<ServerConnection>();

  private constructor(
    readonly wss: WebSocketServer,
    readonly port: number,
  ) {
    wss.on('connection', (ws, req) => this.connections.push(new ServerConnection(ws, req.url ?? '')));
  }

  static async start(): Promise<ScriptedStreamServer> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve, reject) => {
      wss.once('listening', resolve);
      wss.once('error', reject);
    });
    const addr = wss.address();
    if (addr === null || typeof addr === 'string') throw new Error('unexpected address');
    return new ScriptedStreamServer(wss, addr.port);
  }

  url(path: string): string {
    return `ws://127.0.0.1:${this.port}${path}`;
  }

  /** The n-th connection (0-based), once it is there. */
  connection(n: number): Promise<ServerConnection> {
    return this.connections.next((c) => this.connections.items.indexOf(c) === n, { what: `connection #${n}` });
  }

  async stop(): Promise<void> {
    for (const c of this.connections.items) c.ws.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

/**
 * The scripted server a test file shares: started before its tests (and handed to `started`), after
 * each test the clients it tracked closed and its connections dropped and forgotten (each test counts
 * connections from zero), stopped after the file. Returns `track`, which registers a client for that.
 */
export function useScriptedStreamServer(started: (server: ScriptedStreamServer) => void): <T extends StreamClient>(client: T) => T {
  let server: ScriptedStreamServer | undefined;
  const clients: StreamClient[] = [];
  beforeAll(async () => {
    server = await ScriptedStreamServer.start();
    started(server);
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    for (const c of server?.connections.items ?? []) c.drop();
    if (server) server.connections.items.length = 0;
  });
  afterAll(async () => {
    await server?.stop();
  });
  return (client) => {
    clients.push(client);
    return client;
  };
}

/** What a stream client's handlers saw, in order, with waits on it. */
export class Recorder {
  readonly events = new Waitable<Frame>();

  handlers() {
    return {
      onSnapshot: (data: unknown, seq: number, info: unknown) => this.events.push({ kind: 'snapshot', data, seq, info }),
      onUpdate: (data: unknown, seq: number) => this.events.push({ kind: 'update', data, seq }),
      onResume: (seq: number) => this.events.push({ kind: 'resume', seq }),
      onError: (error: unknown) => this.events.push({ kind: 'error', error }),
    };
  }

  /** Waits until an event matches, then gives every event so far. */
  async until(match: (e: Frame) => boolean, what = 'an event'): Promise<Frame[]> {
    await this.events.next(match, { what });
    return [...this.events.items];
  }

  get all(): Frame[] {
    return [...this.events.items];
  }
}
