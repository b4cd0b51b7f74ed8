import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http as httpTransport, HttpRequestError, TimeoutError } from 'viem';
import { nodeHttpFetch } from './node-http-fetch.ts';

let server: http.Server;
let url: string;
const seen: Array<{ method?: string; type?: string; body: string }> = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method, type: req.headers['content-type'], body });
      if (req.url === '/slow') return void setTimeout(() => res.end('{}'), 2_000);
      if (req.url === '/down') {
        res.writeHead(503, { 'content-type': 'text/plain' });
        return void res.end('maintenance');
      }
      const rpc = JSON.parse(body) as { id: number; method: string };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result: rpc.method === 'eth_chainId' ? '0x7a69' : 'é→' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('node:http fetch for viem', () => {
  it('carries JSON-RPC through viem: method, content type, body and a UTF-8 answer', async () => {
    const client = createPublicClient({ transport: httpTransport(url, { fetchFn: nodeHttpFetch as typeof fetch, retryCount: 0 }) });
    expect(await client.getChainId()).toBe(31337);
    expect(await client.request({ method: 'web3_clientVersion' } as never)).toBe('é→');
    const last = seen.at(-1)!;
    expect(last.method).toBe('POST');
    expect(last.type).toBe('application/json');
    expect(JSON.parse(last.body)).toMatchObject({ jsonrpc: '2.0', method: 'web3_clientVersion' });
  });

  it('reports an HTTP error status as viem does', async () => {
    const client = createPublicClient({ transport: httpTransport(`${url}/down`, { fetchFn: nodeHttpFetch as typeof fetch, retryCount: 0 }) });
    const err = await client.getChainId().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error & { walk(fn: (e: unknown) => boolean): unknown }).walk((e) => e instanceof HttpRequestError)).toBeInstanceOf(HttpRequestError);
  });

  it('gives up at the transport timeout', async () => {
    const client = createPublicClient({ transport: httpTransport(`${url}/slow`, { fetchFn: nodeHttpFetch as typeof fetch, retryCount: 0, timeout: 200 }) });
    const err = await client.getChainId().catch((e: unknown) => e);
    expect((err as Error & { walk(fn: (e: unknown) => boolean): unknown }).walk((e) => e instanceof TimeoutError)).toBeInstanceOf(TimeoutError);
  });

  it('fails fast when nothing listens', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await expect(nodeHttpFetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
