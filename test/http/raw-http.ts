/**
 * A bare HTTP/1.1 client over a TCP socket, for tests that send what fetch refuses to send: invalid
 * UTF-8, odd content types, malformed request lines, oversized headers, a body on GET. One request
 * per connection; the answer is read until the server closes or the declared length has arrived.
 */
import { createHmac } from 'node:crypto';
import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  /** The body as text. */
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: Record<string, unknown> | undefined;
}

export interface RawRequest {
  method: string;
  /** Request target as it goes on the wire (already encoded as the test wants it). */
  target: string;
  headers?: Record<string, string>;
  body?: Uint8Array | string;
}

export function requestBytes(req: RawRequest, host: string): Buffer {
  const body = req.body === undefined ? Buffer.alloc(0) : typeof req.body === 'string' ? Buffer.from(req.body, 'utf8') : Buffer.from(req.body);
  const headers: Record<string, string> = { host, connection: 'close', ...(req.headers ?? {}) };
  if (body.length > 0 && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-length' || k.toLowerCase() === 'transfer-encoding')) {
    headers['content-length'] = String(body.length);
  }
  let head = `${req.method} ${req.target} HTTP/1.1\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  return Buffer.concat([Buffer.from(head + '\r\n', 'latin1'), body]);
}

function parseAnswer(raw: Buffer): RawAnswer {
  const end = raw.indexOf('\r\n\r\n');
  if (end === -1) throw new Error(`no complete answer: ${JSON.stringify(raw.toString('latin1').slice(0, 200))}`);
  const lines = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(lines[0].split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  let body = raw.subarray(end + 4);
  if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  const text = body.toString('utf8');
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status, headers, text, json };
}

/** Sends `bytes` as they are and reads the one answer. */
export function sendRaw(baseUrl: string, bytes: Buffer, timeoutMs = 10_000): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port) });
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      try {
        resolve(parseAnswer(Buffer.concat(chunks)));
      } catch (err) {
        reject(err as Error);
      }
    };
    const timer = setTimeout(() => {
      settled = true;
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      // Done once the head is in and the declared body length has arrived.
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      if (end === -1) return;
      const m = /\r\ncontent-length:\s*(\d+)/i.exec(all.subarray(0, end).toString('latin1'));
      if (m && all.length >= end + 4 + Number(m[1])) finish();
    });
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', () => finish());
    socket.write(bytes);
  });
}

export function send(baseUrl: string, req: RawRequest): Promise<RawAnswer> {
  return sendRaw(baseUrl, requestBytes(req, new URL(baseUrl).host));
}

export interface SignOptions {
  apiKey: string;
  apiSecret: string;
  chainId: number | string;
  product: string;
  /** Milliseconds; default now. */
  ts?: number;
  nonce?: string;
}

let nonceCounter = 0;

/**
 * The stock API's headers for `method` `uri` (path from /api/v1 plus the sorted query) and the body
 * bytes: the HMAC covers the bytes exactly as they will be sent.
 */
export function stockAuthHeaders(method: string, uri: string, body: Uint8Array | string | undefined, o: SignOptions): Record<string, string> {
  const ts = String(o.ts ?? Date.now());
  const nonce = o.nonce ?? `raw${process.pid}n${++nonceCounter}x${Math.random().toString(36).slice(2, 10)}`;
  const bytes = body === undefined ? Buffer.alloc(0) : typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
  const sign = createHmac('sha256', o.apiSecret)
    .update(Buffer.concat([Buffer.from(`${method.toUpperCase()}\n${uri}\n${ts}\n${nonce}\n`, 'utf8'), bytes]))
    .digest('hex');
  return {
    'x-api-key': o.apiKey,
    'x-api-sign': sign,
    'x-api-ts': ts,
    'x-api-nonce': nonce,
    'x-api-chain-id': String(o.chainId),
    'x-api-p': o.product,
  };
}

/** Percent-encodes the UTF-8 bytes of `s` (an unpaired surrogate becomes U+FFFD, which encodeURIComponent refuses). */
export function percentEncodeUtf8(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) out += /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
