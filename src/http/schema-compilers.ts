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
type CompilerFactory = (externalSchemas: unknown, options: any) => (route: RouteSchema) => unknown;
/** What Fastify passes a compiler for one schema of a route. */
interface RouteSchema {
  schema: object;
  method?: string;
  url?: string;
  httpPart?: string;
  httpStatus?: string;
}

const poolKey = (externalSchemas: unknown, options: unknown) => `${JSON.stringify(externalSchemas ?? {})}${JSON.stringify(options ?? {})}`;

/** The functions of one set of compilers not compiled yet, with the route and part they are for. */
interface Pending {
  entries: Set<{ what: string; get(): unknown }>;
  made: number;
}

/**
 * A route's function compiled at its first call rather than at the server's start: a start compiled
 * every route's validators and serializers (about 250 ms of a start from a template, 1.93 s to
 * 1.69 s), where a test run calls a handful of routes. What the call answers is the compiled
 * function's, its `errors` (Ajv's, which Fastify reads after a failed validation) included.
 * test/http/route-schemas.test.ts compiles every route's schemas, so a bad one fails there, not at
 * its first request.
 */
function compiledAtFirstCall(pending: Pending, what: string, compile: () => unknown): unknown {
  let compiled: ((data: unknown) => unknown) & { errors?: unknown };
  const get = () => {
    if (compiled === undefined) {
      compiled = compile() as typeof compiled;
      pending.entries.delete(entry);
    }
    return compiled;
  };
  const entry = { what, get };
  pending.entries.add(entry);
  const call = function (this: unknown, data: unknown) {
    const fn = get();
    const result = fn.call(this, data);
    call.errors = fn.errors;
    return result;
  } as ((data: unknown) => unknown) & { errors?: unknown };
  return call;
}

/**
 * One compiled function per (pool, schema): found by the schema object first, then by its JSON text
 * (a route that builds its schema at registration, `Type.Array(Item)` say, makes a new object at
 * each build with the same text; the keywords a compiler reads are all in the text). The texts are
 * the code's own schemas, so the map stays as small as the routes.
 */
function cachedFactory(pending: Pending, kind: string, make: CompilerFactory): CompilerFactory {
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
      if (fn === undefined) {
        pending.made += 1;
        const what = `${kind} of ${route.method ?? ''} ${route.url ?? ''} ${route.httpPart ?? (route.httpStatus === undefined ? '' : `response ${route.httpStatus}`)}`;
        byText.set(text, (fn = compiledAtFirstCall(pending, what, () => compile(route))));
      }
      byObject.set(route.schema, fn);
      return fn;
    };
  };
}

/** Fastify's compilers with the cache in front, and a way to compile what is left. */
export type SharedCompilers = Factories & {
  /**
   * Compiles every route schema's function not compiled yet (a test's check that each compiles):
   * answers how many functions these compilers made, and the ones that failed with why.
   */
  compileEveryRouteSchema(): { functions: number; failed: string[] };
};

/**
 * Fastify's own compilers (Ajv through @fastify/ajv-compiler, fast-json-stringify through its
 * compiler) with a cache in front: pass as `schemaController: { compilersFactory }`.
 */
export function createSharedCompilers(): SharedCompilers {
  const pending: Pending = { entries: new Set(), made: 0 };
  return {
    buildValidator: cachedFactory(pending, 'validator', AjvCompiler() as CompilerFactory),
    buildSerializer: cachedFactory(pending, 'serializer', SerializerSelector() as CompilerFactory),
    compileEveryRouteSchema() {
      const failed: string[] = [];
      for (const entry of [...pending.entries]) {
        try {
          entry.get();
        } catch (err) {
          failed.push(`${entry.what}: ${(err as Error).message}`);
        }
      }
      return { functions: pending.made, failed };
    },
  } as SharedCompilers;
}

/** The process's: every server of the stack is built with these. */
export const sharedCompilersFactory = createSharedCompilers();
