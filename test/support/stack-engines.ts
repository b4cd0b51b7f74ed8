/**
 * The storage engines a whole-stack suite runs on: SQLite always; PostgreSQL (in a schema of its
 * own, dropped afterwards) when DATABASE_URL is set, with REDIS_URL's shared nonce store when that
 * is set too. Use with `describe.each(stackEngines('prefix'))('… ($name)', (engine) => …)` and pass
 * `engine.env()` to startTestStack.
 */
import pg from 'pg';
import { uniqueSchemaName } from './test-databases.ts';

export interface StackEngine {
  name: 'sqlite' | 'postgres';
  env(): Record<string, string>;
  cleanup?(env: Record<string, string>): Promise<void>;
}

export function stackEngines(schemaPrefix: string): StackEngine[] {
  const engines: StackEngine[] = [{ name: 'sqlite', env: () => ({}) }];
  if (process.env.DATABASE_URL) {
    engines.push({
      name: 'postgres',
      env: () => ({
        DATABASE_URL: process.env.DATABASE_URL!,
        DATABASE_SCHEMA: uniqueSchemaName(schemaPrefix),
        ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
      }),
      async cleanup(env) {
        await dropStackSchema(env);
      },
    });
  }
  return engines;
}

/** Drops the PostgreSQL schema a stack ran in (`DATABASE_SCHEMA` of its env); nothing for SQLite. */
export async function dropStackSchema(env: Record<string, string>): Promise<void> {
  if (!env.DATABASE_URL || !env.DATABASE_SCHEMA) return;
  const client = new pg.Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${env.DATABASE_SCHEMA}" cascade`);
  } finally {
    await client.end();
  }
}
