/**
 * The shared route-schema compilers (src/http/schema-compilers.ts) compile a route's validator and
 * serializer at its first call, not at the server's start: the answers are Fastify's own (a 400
 * naming the field, a response cut to its schema), and a schema that does not compile is found by
 * compileEveryRouteSchema, which the stack's route check runs (route-schemas.test.ts).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSharedCompilers } from '../../src/http/schema-compilers.ts';

describe('route schemas compiled at their first call', () => {
  // Compilers of this test's own: the process's are the stack's (route-schemas.test.ts).
  const compilers = createSharedCompilers();
  let app: FastifyInstance;
  beforeAll(async () => {
    app = Fastify({ schemaController: { compilersFactory: compilers } });
    app.post(
      '/orders',
      {
        schema: {
          body: { type: 'object', required: ['size'], properties: { size: { type: 'integer', minimum: 1 } } },
          response: { 200: { type: 'object', properties: { size: { type: 'integer' } } } },
        },
      },
      async (request) => ({ size: (request.body as { size: number }).size, secret: 'not in the schema' }),
    );
    // `type: 'nope'` is no JSON Schema type: Ajv refuses to compile it.
    app.post('/broken', { schema: { body: { type: 'nope' } } }, async () => ({}));
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
  });

  it("answers as Fastify's eager compilers do: the validator's errors, the serializer's cut", async () => {
    const bad = await app.inject({ method: 'POST', url: '/orders', payload: { size: 0 } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe('body/size must be >= 1');
    const missing = await app.inject({ method: 'POST', url: '/orders', payload: {} });
    expect(missing.json().message).toBe("body must have required property 'size'");
    const ok = await app.inject({ method: 'POST', url: '/orders', payload: { size: 3 } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toBe('{"size":3}');
  });

  it('a schema that does not compile starts the server, and compileEveryRouteSchema names it', () => {
    const { functions, failed } = compilers.compileEveryRouteSchema();
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatch(/^validator of POST \/broken body: /);
    // Two validators and one serializer: /orders' body and response, /broken's body.
    expect(functions).toBe(3);
  });
});
