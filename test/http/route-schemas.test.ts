/**
 * Every route of the whole stack (both APIs, their streams, the console, the sandbox) has request
 * and response schemas that compile. The servers compile them at each route's first call
 * (src/http/schema-compilers.ts), so a start no longer proves it: this does.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sharedCompilersFactory } from '../../src/http/schema-compilers.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack();
}, 180_000);
afterAll(async () => {
  await t?.stop();
});

it('every route schema of the stack compiles', () => {
  expect(t.demo.sandbox).toBeDefined();
  const { functions, failed } = sharedCompilersFactory.compileEveryRouteSchema();
  expect(failed).toEqual([]);
  expect(functions).toBeGreaterThan(100);
});
