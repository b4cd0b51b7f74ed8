import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http as httpTransport } from 'viem';
import { createDirectRpc } from './direct-rpc.ts';

let server: http.Server;
let url: string;
let lastBody = '';
let lastAuth: string | undefined;
/** Requests seen per path, for the flaky paths and the retry counts. */
const hits = new Map<string, number>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      lastBody = body;
      lastAuth = req.headers.authorization;
      const n = (hits.get(req.url ?? '') ?? 0) + 1;
      hits.set(req.url ?? '', n);
      // Fails the first request of each pair: a dropped connection, or an overloaded server.
      if (req.url === '/flaky-reset' && n % 2 === 1) return void req.socket.destroy();
      if (req.url === '/flaky-503' && n % 2 === 1) return void res.writeHead(503).end('busy');
      if (req.url === '/slow') return void setTimeout(() => res.end('{}'), 2_000);
      if (req.url === '/down') return void res.writeHead(503).end('maintenance');
      if (req.url === '/garbage') return void res.writeHead(200).end('<html>');
      if (req.url === '/cut') {
        res.writeHead(200, { 'content-length': '100' });
        res.write('{"jsonrpc"');
        return void res.destroy();
      }
      const rpc = JSON.parse(body) as { id: number; method: string };
      res.writeHead(200, { 'content-type': 'application/json' });
      if (rpc.method === 'eth_fail') return void res.end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, error: { code: -32000, message: 'execution reverted' } }));
      res.end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result: `answer to ${rpc.method}` }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function rpcAt(path: string, client: 'fetch', timeout = 1_000, retryCount = 0) {
  const publicClient = createPublicClient({
    transport: httpTransport(`${url}${path}`, { timeout, retryCount, retryDelay: 10, fetchOptions: { headers: { authorization: 'Bearer provider-key' } } }),
  });
  return createDirectRpc(publicClient, client)!;
}

describe.each(['fetch'] as const)('direct JSON-RPC over %s', (client) => {
  it('posts a JSON-RPC request with the transport headers and answers the result', async () => {
    expect(await rpcAt('/', client)<string>('eth_call', [{ to: '0x1' }, 'latest'])).toBe('answer to eth_call');
    expect(JSON.parse(lastBody)).toMatchObject({ jsonrpc: '2.0', method: 'eth_call', params: [{ to: '0x1' }, 'latest'] });
    expect(lastAuth).toBe('Bearer provider-key');
  });

  it('maps an RPC error to a non-retryable error naming its code, without the URL', async () => {
    const err = (await rpcAt('/', client)('eth_fail', []).catch((e: unknown) => e)) as { code: string; retryable: boolean; detail: unknown; message: string };
    expect(err).toMatchObject({ code: 'INTERNAL', retryable: false, detail: { reason: 'rpc', rpcCode: -32000 } });
    expect(JSON.stringify(err.detail) + err.message).not.toContain('127.0.0.1');
  });

  it.each([
    ['an HTTP 503', '/down', 1_000],
    ['an answer that is not JSON', '/garbage', 1_000],
    ['a connection cut mid-answer', '/cut', 1_000],
    ['no answer within the timeout', '/slow', 150],
  ])('maps %s to ChainUnavailableError (retryable)', async (_name, path, timeout) => {
    await expect(rpcAt(path, client, timeout)('eth_call', [])).rejects.toMatchObject({ code: 'CHAIN_UNAVAILABLE', retryable: true });
  });

  it.each(['/flaky-reset', '/flaky-503'])('repeats a read that failed on %s as often as the transport allows', async (path) => {
    hits.set(path, 0);
    await expect(rpcAt(path, client, 1_000, 0)('eth_call', [])).rejects.toMatchObject({ code: 'CHAIN_UNAVAILABLE' });
    expect(hits.get(path)).toBe(1);
    hits.set(path, 0);
    expect(await rpcAt(path, client, 1_000, 1)('eth_call', [])).toBe('answer to eth_call');
    expect(hits.get(path)).toBe(2);
  });

  it('does not repeat a read that timed out: the time budget is spent', async () => {
    hits.set('/slow', 0);
    await expect(rpcAt('/slow', client, 150, 3)('eth_call', [])).rejects.toMatchObject({ code: 'CHAIN_UNAVAILABLE' });
    expect(hits.get('/slow')).toBe(1);
  });
});

it('is not used for a transport other than plain http', () => {
  const publicClient = createPublicClient({ transport: () => ({ config: { key: 'custom', name: 'custom', request: async () => null, retryCount: 0, timeout: 1, type: 'custom' }, request: async () => null, value: {} }) } as never);
  expect(createDirectRpc(publicClient, 'fetch')).toBeUndefined();
});
