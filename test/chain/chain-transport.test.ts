/**
 * The transport every chain client uses is viem's http transport as is; what the stock API relies
 * on is that any RPC trouble becomes a ChainUnavailableError (a 503) fast, without the RPC URL.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BaseError, createPublicClient, ResponseBodyTooLargeError } from 'viem';
import { chainTransport, toChainError } from '../../src/chain/chain-client.ts';
import { ChainUnavailableError } from '../../src/errors/app-error.ts';

let server: http.Server;
let base: string;
let requests = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      requests++;
      if (req.url === '/huge') {
        // A node (or something in front of it) answering 11 MiB.
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(1 << 20, 0x20);
        let sent = 0;
        const more = () => {
          while (sent <= 11 * chunk.length && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end();
        };
        return void more();
      }
      if (req.url === '/slow') return void setTimeout(() => res.end('{}'), 3_000);
      if (req.url === '/down') {
        res.writeHead(503, { 'content-type': 'text/plain' });
        return void res.end('maintenance');
      }
      if (req.url === '/cut') {
        // Headers and half an answer, then the connection goes.
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '200' });
        res.write('{"jsonrpc":"2.0","id":1,"res');
        return void setTimeout(() => res.socket?.destroy(), 20);
      }
      const parsed = JSON.parse(body) as { id: number; method: string } | Array<{ id: number; method: string }>;
      const answer = (rpc: { id: number; method: string }) => ({ jsonrpc: '2.0', id: rpc.id, result: rpc.method === 'eth_chainId' ? '0x7a69' : 'é→' });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function failure(path: string, timeoutMs = 300): Promise<unknown> {
  const client = createPublicClient({ transport: chainTransport(`${base}${path}`, timeoutMs) });
  return client.getChainId().then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  );
}

describe('chainTransport', () => {
  it('carries JSON-RPC both ways, UTF-8 included', async () => {
    const client = createPublicClient({ transport: chainTransport(`${base}/`) });
    expect(await client.getChainId()).toBe(31337);
    expect(await client.request({ method: 'web3_clientVersion' } as never)).toBe('é→');
  });

  it.each([
    ['an HTTP error status', '/down'],
    ['a node that does not answer in time', '/slow'],
    ['a connection cut mid-answer', '/cut'],
  ])('%s → ChainUnavailableError without the URL', async (_what, path) => {
    const mapped = toChainError(await failure(path));
    expect(mapped).toBeInstanceOf(ChainUnavailableError);
    expect(mapped.retryable).toBe(true);
    expect(mapped.message).toBe('chain: RPC unavailable, try again later');
    expect(JSON.stringify({ m: mapped.message, d: mapped.detail })).not.toContain('127.0.0.1');
  });

  it('with batching, calls made together share one HTTP exchange and each gets its own answer', async () => {
    const client = createPublicClient({ transport: chainTransport(`${base}/`, 5_000, true) });
    const before = requests;
    const answers = await Promise.all([client.getChainId(), client.request({ method: 'web3_clientVersion' } as never), client.getChainId()]);
    expect(answers).toEqual([31337, 'é→', 31337]);
    expect(requests - before).toBe(1);
    const unbatched = createPublicClient({ transport: chainTransport(`${base}/`) });
    const first = requests;
    await Promise.all([unbatched.getChainId(), unbatched.request({ method: 'web3_clientVersion' } as never)]);
    expect(requests - first).toBe(2);
  });

  it('refuses an answer over 10 MiB as viem does (not a transport failure: the indexer splits its range on it)', async () => {
    const err = await failure('/huge', 5_000);
    expect(err).toBeInstanceOf(BaseError);
    expect((err as BaseError).walk((e) => e instanceof ResponseBodyTooLargeError)).toBeInstanceOf(ResponseBodyTooLargeError);
    expect(toChainError(err)).not.toBeInstanceOf(ChainUnavailableError);
  });

  it('retries a failed request once, then gives up', async () => {
    const before = requests;
    await failure('/down');
    expect(requests - before).toBe(2);
  });

  it('a refused connection → ChainUnavailableError', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const client = createPublicClient({ transport: chainTransport(`http://127.0.0.1:${port}`, 300) });
    const err = await client.getChainId().catch((e: unknown) => e);
    expect(toChainError(err)).toBeInstanceOf(ChainUnavailableError);
  });
});
