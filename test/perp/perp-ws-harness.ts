/**
 * The perp stream endpoint beside a harness's API (test/support/perp-api-harness.ts), wired as the
 * perp-api role wires it: the API's own order service and rate-limit checker (perpOrderServiceOf,
 * rateLimitOf), the real key service, an in-process stream hub. It listens on a port of its own (the
 * harness's server is already listening when it is handed over), which changes nothing the tests
 * look at: REST and the stream share one order service and one rate-limit store, as in the stack.
 */
import { createHmac, randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { createMemoryNonceStore } from '../../src/auth/nonce-store.ts';
import { rateLimitOf } from '../../src/http/rate-limiter.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { perpOrderServiceOf } from '../../src/perp/perp-api.ts';
import { perpChannels } from '../../src/perp/streams/perp-stream-channels.ts';
import { attachPerpStreams, PERP_WS_PATH } from '../../src/perp/streams/perp-stream-endpoint.ts';
import type { StreamEndpoint, StreamLimits } from '../../src/streams/stream-endpoint.ts';
import { createMemoryStreamBroker } from '../../src/streams/stream-broker.ts';
import { createStreamHub } from '../../src/streams/stream-hub.ts';
import type { PrivateKeyAccount } from 'viem/accounts';
import { orderType } from '../../src/perp/order-typed-data.ts';
import { perpDomain } from '../../src/perp/perp-key-service.ts';
import { HARNESS_CHAIN_ID, HARNESS_VAULT, type PerpHarness } from '../support/perp-api-harness.ts';
import { openSocket, type StreamFrame, type TestSocket } from '../support/ws-client.ts';

export interface StreamKey {
  apiKey: string;
  apiSecret: string;
}

export interface OrderStream {
  url: string;
  endpoint: StreamEndpoint;
  /** A socket, closed by `stop`. */
  open(): Promise<TestSocket>;
  /** A socket after a successful `auth` with `key`. */
  authed(key: StreamKey): Promise<TestSocket>;
  stop(): Promise<void>;
}

/** A signed perp `auth` frame (contract.md §C). */
export function authFrame(key: StreamKey, ts = Date.now()) {
  return { op: 'auth', id: 'auth', apiKey: key.apiKey, ts, sign: createHmac('sha256', key.apiSecret).update(`${ts}GET${PERP_WS_PATH}`).digest('base64') };
}

/**
 * A signed order for `wallet`, built as a client library would (no REST call): a resting AAPL-USD
 * LIMIT BUY of 1 at 150 unless `fields` say otherwise.
 */
export async function signedOrder(wallet: PrivateKeyAccount, nonce: bigint, fields: Partial<Record<string, unknown>> = {}) {
  const message = {
    account: wallet.address, symbol: 'AAPL-USD', side: 'BUY', orderType: 'LIMIT', size: '1', price: '150', timeInForce: 'GTC', reduceOnly: false, clientOrderId: '',
    nonce: String(nonce), expiry: String(Date.now() + 60_000), ...fields,
  };
  const typed = orderType.build(perpDomain(HARNESS_CHAIN_ID, HARNESS_VAULT), message);
  return { message: typed.message as Record<string, unknown>, signature: await wallet.signTypedData(typed as never) };
}

/** Sends an order frame and waits for its result (matched by id, a fresh one unless given). */
export async function sendOrder(s: TestSocket, action: string, body: unknown, id: string = randomUUID()): Promise<StreamFrame> {
  const from = s.frames.length;
  s.send({ op: 'order', id, action, body });
  return s.next((f) => f.type === 'result' && f.id === id, { from });
}

export async function attachOrderStream(h: PerpHarness, limits: Partial<StreamLimits> = {}): Promise<OrderStream> {
  const broker = createMemoryStreamBroker();
  const hub = createStreamHub({ broker, catalog: perpChannels(), goneCode: 10003 });
  await hub.start();
  const nonces = createMemoryNonceStore();
  const app: FastifyInstance = Fastify();
  const endpoint = attachPerpStreams(app, {
    hub,
    keys: h.keys,
    nonces,
    chainId: HARNESS_CHAIN_ID,
    isSymbol: (s) => h.venue?.sequencer.engine.instrument(s) !== undefined,
    logger: createLogger({ level: 'silent' }),
    limits,
    orders: perpOrderServiceOf(h.app),
    rateLimit: rateLimitOf(h.app),
    settled: h.apiVenue?.settled,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `ws://127.0.0.1:${(app.server.address() as { port: number }).port}${PERP_WS_PATH}`;
  const sockets: TestSocket[] = [];
  const open = async () => {
    const s = await openSocket(url);
    sockets.push(s);
    return s;
  };
  return {
    url,
    endpoint,
    open,
    async authed(key) {
      const s = await open();
      s.send(authFrame(key));
      const answer = await s.next((f) => f.id === 'auth');
      if (answer.type !== 'authenticated') throw new Error(`auth refused: ${JSON.stringify(answer)}`);
      return s;
    },
    async stop() {
      for (const s of sockets) s.close();
      await endpoint.close();
      await app.close();
      await hub.stop();
      await nonces.close();
    },
  };
}
