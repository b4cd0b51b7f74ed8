/**
 * The sandbox control API as the sandbox tests call it: bearer-authenticated JSON over fetch against
 * a started stack's demo.json, the answer's envelope kept whole, `ok` for a 200's data and `refusal`
 * for a 400's errMsg (the envelope around it checked).
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

export interface SandboxAnswer {
  status: number;
  headers: Headers;
  json: any;
}

export function sandboxClient(t: TestStack) {
  const base = t.demo.sandbox!.baseUrl;
  const token = t.demo.sandbox!.token;
  const call = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<SandboxAnswer> => {
    const h: Record<string, string> = { authorization: `Bearer ${token}`, ...headers };
    if (body !== undefined) h['content-type'] = 'application/json';
    const res = await fetch(`${base}${route}`, { method, headers: h, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: res.status, headers: res.headers, json: (await res.json()) as any };
  };
  const ok = async (method: string, route: string, body?: unknown, headers?: Record<string, string>) => {
    const r = await call(method, route, body, headers);
    if (r.status !== 200) throw new Error(`${method} ${route}: ${r.status} ${JSON.stringify(r.json)}`);
    return r.json.data;
  };
  const refusal = async (method: string, route: string, body?: unknown, headers?: Record<string, string>) => {
    const r = await call(method, route, body, headers);
    expect([r.status, r.json.code]).toEqual([400, 400]);
    return r.json.errMsg as string;
  };
  return { call, ok, refusal };
}

/**
 * One stack for a file's tests with its sandbox client, started before them and stopped after:
 * `s.t` and `s.sb` once started; `s.restart()` stops it and starts it again on its data directory.
 */
export function useSandboxStack(env: Record<string, string> = {}) {
  const s = {} as { t: TestStack; sb: ReturnType<typeof sandboxClient>; restart(): Promise<void> };
  beforeAll(async () => {
    s.t = await startTestStack(env);
    s.sb = sandboxClient(s.t);
  }, 180_000);
  afterAll(async () => {
    await s.t?.stop();
  });
  s.restart = async () => {
    const dataDir = s.t.dataDir;
    await s.t.stop();
    s.t = await startTestStack(env, { dataDir });
    s.sb = sandboxClient(s.t);
  };
  return s;
}
