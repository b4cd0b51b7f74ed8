/**
 * The stream client's pure parts around the connection (stream-client-core.ts): its options checked
 * and settled, the `auth` frame it sends, and a received frame decoded. Apart from the client's
 * state machine, which they neither read nor change.
 */
import { createHmacSigner, nextStreamAuthTs, randomNonce, signPerpStreamAuth, signStockStreamAuth, type HmacSigner } from '../stream-sign.ts';
import { chainIdOf, streamApiOf, withQuery } from './stream-internals.ts';
import type { ReconnectOptions, StreamApi, StreamClientOptions, StreamLogger } from './stream-types.ts';

/** The options a client keeps, checked in the order the client always checked them (each refusal a TypeError). */
export function checkedStreamOptions(options: StreamClientOptions): {
  url: string;
  api: StreamApi | undefined;
  apiKey: string | undefined;
  signer: HmacSigner | undefined;
  chainId: number | undefined;
  product: string | undefined;
  socketUrl: string;
} {
  if (typeof options.url !== 'string' || options.url === '') throw new TypeError('StreamClient: url is required');
  const url = options.url;
  const api = options.api ?? streamApiOf(options.url);
  if ((options.apiKey === undefined) !== (options.apiSecret === undefined)) {
    throw new TypeError('StreamClient: apiKey and apiSecret go together');
  }
  let apiKey: string | undefined;
  let signer: HmacSigner | undefined;
  if (options.apiKey !== undefined && options.apiSecret !== undefined) {
    if (api === undefined) throw new TypeError('StreamClient: api ("perp" or "stock") is required to authenticate when the URL does not name the API');
    apiKey = options.apiKey;
    signer = createHmacSigner(options.apiSecret);
  }
  if ((options.chainId !== undefined || options.product !== undefined) && api !== 'stock') {
    throw new TypeError('StreamClient: chainId and product are options of the stock streams');
  }
  const chainId = options.chainId === undefined ? undefined : chainIdOf(options.chainId);
  if (options.product !== undefined && (typeof options.product !== 'string' || options.product === '')) throw new TypeError('StreamClient: product must be a non-empty string');
  const socketUrl = chainId === undefined ? url : withQuery(url, 'chainId', String(chainId));
  return { url, api, apiKey, signer, chainId, product: options.product, socketUrl };
}

/** The reconnect backoff with its defaults. */
export function reconnectPolicy(reconnect: ReconnectOptions | undefined): Required<ReconnectOptions> {
  return {
    baseMs: reconnect?.baseMs ?? 250,
    capMs: reconnect?.capMs ?? 10_000,
    maxAttempts: reconnect?.maxAttempts ?? Number.POSITIVE_INFINITY,
    stableAfterMs: reconnect?.stableAfterMs ?? 5_000,
  };
}

/** The `auth` frame of a connection (docs/streams.md): the perpetual API's signature, or the stock API's with a nonce and the venue. */
export async function authFrame(
  id: string,
  a: { api: StreamApi | undefined; apiKey: string; signer: HmacSigner; nowMs: number; chainId: number | undefined; product: string | undefined },
): Promise<Record<string, unknown>> {
  // Never the same ts twice for this key in this process (streams opened together would sign alike).
  const ts = nextStreamAuthTs(a.apiKey, a.nowMs);
  if (a.api === 'perp') {
    return { op: 'auth', id, apiKey: a.apiKey, ts, sign: await signPerpStreamAuth(a.signer, ts) };
  }
  const nonce = randomNonce();
  // The chain and product as REST's headers carry them: not signed, as those headers are not.
  const venue = { ...(a.chainId !== undefined ? { chainId: a.chainId } : {}), ...(a.product !== undefined ? { product: a.product } : {}) };
  return { op: 'auth', id, apiKey: a.apiKey, ts, nonce, sign: await signStockStreamAuth(a.signer, ts, nonce), ...venue };
}

/** A received frame as a JSON object, or undefined (logged) when it is not one. */
export function decodeFrame(raw: unknown, log: StreamLogger): Record<string, unknown> | undefined {
  let text: string;
  if (typeof raw === 'string') text = raw;
  else if (raw instanceof ArrayBuffer) text = new TextDecoder().decode(raw);
  else if (ArrayBuffer.isView(raw)) text = new TextDecoder().decode(new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength));
  else {
    log('warn', 'unreadable frame ignored');
    return undefined;
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    return parsed as Record<string, unknown>;
  } catch {
    log('warn', 'frame is not a JSON object: ignored', { frame: text.slice(0, 200) });
    return undefined;
  }
}
