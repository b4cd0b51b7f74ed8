/**
 * The sandbox control API (docs/sandbox.md) over fetch: `Authorization: Bearer <token>` from
 * demo.json, JSON bodies, the stock API's envelope `{code, errMsg, uuid, data, t}` in the answer.
 */

export interface SandboxAnswer<T = unknown> {
  status: number;
  headers: Headers;
  /** The whole envelope as answered. */
  body: { code: number; errMsg?: string; uuid?: string; data?: T; t?: number };
}

/** A sandbox route answered other than 200: its HTTP status and the envelope's `errMsg`. */
export class SandboxError extends Error {
  constructor(
    readonly method: string,
    readonly route: string,
    readonly status: number,
    readonly errMsg: string | undefined,
    readonly body: unknown,
  ) {
    super(`sandbox ${method} ${route}: HTTP ${status}${errMsg ? `: ${errMsg}` : ''}`);
    this.name = 'SandboxError';
  }
}

export interface SandboxTarget {
  baseUrl: string;
  token: string;
}

export async function sandboxCall<T = unknown>(target: SandboxTarget, method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<SandboxAnswer<T>> {
  const h: Record<string, string> = { authorization: `Bearer ${target.token}`, ...headers };
  if (body !== undefined) h['content-type'] = 'application/json';
  const res = await fetch(`${target.baseUrl}${route}`, { method, headers: h, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  let parsed: SandboxAnswer<T>['body'];
  try {
    parsed = JSON.parse(text) as SandboxAnswer<T>['body'];
  } catch {
    parsed = { code: res.status, errMsg: text.slice(0, 500) };
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** The answer's `data` on a 200; a SandboxError otherwise. */
export async function sandboxData<T>(target: SandboxTarget, method: string, route: string, body?: unknown, headers?: Record<string, string>): Promise<T> {
  const a = await sandboxCall<T>(target, method, route, body, headers);
  if (a.status !== 200) throw new SandboxError(method, route, a.status, a.body.errMsg, a.body);
  return a.body.data as T;
}
