/**
 * A WebSocket client for stream tests: every frame kept in order, and waits for a frame that
 * matches, for the close, never for a fixed time.
 */
import WebSocket from 'ws';

export interface StreamFrame {
  type: string;
  id?: string;
  channel?: string;
  symbol?: string;
  seq?: number;
  data?: any;
  code?: number;
  msg?: string;
  resumed?: boolean;
  account?: string;
}

export interface TestSocket {
  ws: WebSocket;
  frames: StreamFrame[];
  send(msg: unknown): void;
  /** The first frame from index `from` on that matches; waits for it up to `timeoutMs`. */
  next(match: (f: StreamFrame) => boolean, opts?: { from?: number; timeoutMs?: number }): Promise<StreamFrame>;
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

export async function openSocket(url: string, opts: WebSocket.ClientOptions = {}): Promise<TestSocket> {
  const ws = new WebSocket(url, opts);
  const frames: StreamFrame[] = [];
  const waiters = new Set<() => void>();
  ws.on('message', (m, isBinary) => {
    // The protocol is JSON text frames only.
    if (isBinary) throw new Error('a binary frame from the stream endpoint');
    frames.push(JSON.parse(m.toString()) as StreamFrame);
    for (const w of [...waiters]) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    ws,
    frames,
    send: (msg) => ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg)),
    next(match, o = {}) {
      const timeoutMs = o.timeoutMs ?? 20_000;
      let from = o.from ?? 0;
      return new Promise((resolve, reject) => {
        const check = () => {
          for (; from < frames.length; from++) {
            if (match(frames[from])) {
              waiters.delete(check);
              clearTimeout(timer);
              resolve(frames[from]);
              return;
            }
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching frame in ${timeoutMs} ms; last frames: ${JSON.stringify(frames.slice(-5))}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    closed,
    close: () => ws.close(),
  };
}

/** An upgrade the server refuses: its HTTP status and body (rejects when the upgrade is accepted). */
export function refusedUpgrade(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.on('open', () => {
      ws.close();
      reject(new Error(`the upgrade of ${url} was accepted`));
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on('error', () => {});
  });
}
