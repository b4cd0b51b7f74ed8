/**
 * The stock API's opaque authentication refusal as tests check it: a signed request sent as it is,
 * and the refusal's shape and the cause its log line holds (the answer never says which check failed).
 */
import { expect } from 'vitest';
import type { SignedRequest } from '@tokex/sdk';

export async function send(req: SignedRequest): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Asserts the opaque refusal (HTTP 400, code 401) and answers the cause `logs` hold under its uuid. */
export function refusedFor(r: { status: number; body: Record<string, unknown> }, logs: readonly string[]): string {
  expect(r.status).toBe(400);
  expect(Object.keys(r.body).sort()).toEqual(['code', 'errMsg', 't', 'uuid']);
  expect(r.body).toMatchObject({ code: 401, errMsg: 'Unauthorized' });
  const line = logs.find((l) => l.includes(String(r.body.uuid)) && l.includes('authentication failed'));
  expect(line, 'the refusal is logged under its uuid').toBeDefined();
  return JSON.parse(line!).reason as string;
}
