/**
 * Still used by src/indexer/chain-source.ts only, which moves onto viem (issue 12 §3); this file
 * goes when that use does.
 *
 * JSON-RPC calls straight to the URL of a viem client's http transport, for the hot reads: viem's
 * request path (JSON with a bigint replacer, retry, dedupe and timeout wrappers, an AbortController
 * per call) and its response handling cost more than the exchange itself, both for the indexer's
 * multi-megabyte eth_getLogs answers and for the API's per-request eth_call. Errors are mapped as
 * `toChainError` maps them (transport trouble → ChainUnavailableError, retryable; an RPC error → a
 * non-retryable AppError naming its code) and never carry the URL.
 */
import type { PublicClient } from 'viem';
import { AppError, ChainUnavailableError } from '../errors/app-error.ts';

export type DirectRpc = <T>(method: string, params: unknown[]) => Promise<T>;

interface HttpTransportFacts {
  type?: string;
  url?: string;
  timeout?: number;
  retryCount?: number;
  retryDelay?: number;
  fetchOptions?: Omit<RequestInit, 'body'>;
}

function isTimeout(err: unknown): boolean {
  const name = err instanceof Error ? err.name : '';
  return name === 'TimeoutError' || name === 'AbortError';
}

/** Undefined when the transport is not plain http (then use viem's request). */
export function createDirectRpc(publicClient: PublicClient, _client: 'fetch' = 'fetch'): DirectRpc | undefined {
  const t = publicClient.transport as HttpTransportFacts;
  if (t.type !== 'http' || !t.url) return undefined;
  const url = new URL(t.url);
  const timeout = t.timeout ?? 10_000;
  // As the transport is configured (viem's http transport: retryCount, retryDelay doubling).
  const retries = Math.max(0, t.retryCount ?? 0);
  const retryDelay = Math.max(0, t.retryDelay ?? 100);
  const fetchOptions = t.fetchOptions ?? {};
  const headers = { ...(fetchOptions.headers as Record<string, string> | undefined), 'content-type': 'application/json' };
  let id = 0;

  async function exchange(body: string): Promise<{ status: number; text: string }> {
    const res = await fetch(url, { ...fetchOptions, method: 'POST', headers, body, signal: AbortSignal.timeout(timeout) });
    return { status: res.status, text: await res.text() };
  }

  /**
   * The exchange, repeated up to `retries` times when the connection failed (a keep-alive socket the
   * server had just closed, say) or the server answered 5xx/429. A timeout is not repeated: it has
   * used the whole time budget already. Every read sent this way is idempotent.
   */
  async function exchangeWithRetry(body: string): Promise<{ status: number; text: string }> {
    for (let attempt = 0; ; attempt++) {
      let failure: ChainUnavailableError;
      try {
        const answer = await exchange(body);
        if (answer.status < 500 && answer.status !== 429) return answer;
        failure = new ChainUnavailableError({ detail: { reason: 'http', status: answer.status } });
      } catch (err) {
        failure = new ChainUnavailableError({ detail: { reason: err instanceof Error ? err.name : 'fetch' } });
        if (isTimeout(err)) throw failure;
      }
      if (attempt >= retries) throw failure;
      await new Promise((r) => setTimeout(r, retryDelay * 2 ** attempt));
    }
  }

  return async <T>(method: string, params: unknown[]): Promise<T> => {
    const answer = await exchangeWithRetry(JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }));
    if (answer.status < 200 || answer.status >= 300) {
      throw new AppError('INTERNAL', 'chain: unexpected error', { detail: { reason: 'http', status: answer.status } });
    }
    let body: { result?: T; error?: { code?: number; message?: string } };
    try {
      body = JSON.parse(answer.text) as typeof body;
    } catch {
      throw new ChainUnavailableError({ detail: { reason: 'invalid JSON-RPC response' } });
    }
    if (body.error) {
      throw new AppError('INTERNAL', 'chain: unexpected error', {
        detail: { reason: 'rpc', rpcCode: body.error.code, rpcMessage: String(body.error.message ?? '').slice(0, 200) },
      });
    }
    return body.result as T;
  };
}
