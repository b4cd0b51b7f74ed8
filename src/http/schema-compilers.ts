/**
 * The route schemas' compilers, shared by every Fastify server this process builds.
 *
 * Fastify makes a fresh Ajv for each server and compiles each route's request schemas with it, and
 * fast-json-stringify's code for each response schema, again for each server. The sandbox's
 * snapshots and reverts (src/app/revertible-stack.ts) build the two APIs' servers again in the same
 * process, from the same schema objects (module constants of the contract package and the routes):
 * compiled once, each schema's function is reused by every later build (docs/performance.md, "The
 * sandbox").
 *
 * The functions compiled are pure (a validator or a serializer of one schema), so sharing them
 * between servers shares no state. Servers built with other Ajv options or external schemas get
 * compilers of their own (the pools below are keyed by both, as Fastify's are).
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type Factories = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
/** What both of Fastify's compiler factories are: (external schemas, options) → (route) → a compiled function. */
type CompilerFactory = (externalSchemas: unknown, options: any) => (route: { schema: object }) => unknown;

const poolKey = (externalSchemas: unknown, options: unknown) => `${JSON.stringify(externalSchemas ?? {})}${JSON.stringify(options ?? {})}`;

/**
 * One compiled function per (pool, schema): found by the schema object first, then by its JSON text
 * (a route that builds its schema at registration, `Type.Array(Item)` say, makes a new object at
 * each build with the same text; the keywords a compiler reads are all in the text). The texts are
 * the code's own schemas, so the map stays as small as the routes.
 */
function cachedFactory(make: CompilerFactory): CompilerFactory {
  const pools = new Map<string, { compile: ReturnType<CompilerFactory>; byObject: WeakMap<object, unknown>; byText: Map<string, unknown> }>();
  return (externalSchemas, options) => {
    const key = poolKey(externalSchemas, options);
    let pool = pools.get(key);
    if (!pool) pools.set(key, (pool = { compile: make(externalSchemas, options), byObject: new WeakMap(), byText: new Map() }));
    const { compile, byObject, byText } = pool;
    return (route) => {
      let fn = byObject.get(route.schema);
      if (fn !== undefined) return fn;
      const text = JSON.stringify(route.schema);
      fn = byText.get(text);
      if (fn === undefined) byText.set(text, (fn = compile(route)));
      byObject.set(route.schema, fn);
      return fn;
    };
  };
}

/**
 * Fastify's own compilers (Ajv through @fastify/ajv-compiler, fast-json-stringify through its
 * compiler) with a cache in front: pass as `schemaController: { compilersFactory }`.
 */
export const sharedCompilersFactory = {
  buildValidator: cachedFactory(AjvCompiler() as CompilerFactory),
  buildSerializer: cachedFactory(SerializerSelector() as CompilerFactory),
} as Factories;
