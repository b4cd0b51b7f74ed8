/**
 * A NUL (U+0000) in a text value is the client's error on either engine, never a 500: PostgreSQL
 * refuses it (22021 in text, 22P05 in jsonb) and the storage layer answers that as a ValidationError
 * for every query at once; SQLite stores and returns it. The hostile-input fuzz found two routes
 * whose free text reached PostgreSQL this way (test/stock/stock-hostile-regressions.test.ts); this holds the rule for any
 * field no pattern of the contract stops.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { AppError, ValidationError } from '../../src/errors/app-error.ts';
import type { Db } from '../../src/storage/database.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

describe.each(testDatabases)('a NUL in a text value ($name)', ({ name, open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it(name === 'postgres' ? 'is a ValidationError naming the character, in text and in jsonb' : 'is stored and read back as it was', async () => {
    const text = 'a\u0000b';
    if (name === 'sqlite') {
      const r = await sql<{ v: string }>`select ${text} as v`.execute(db.kysely);
      expect(r.rows[0].v).toBe(text);
      return;
    }
    for (const query of [sql`select ${text}::text as v`, sql`select ${'{"a":"\\u0000"}'}::jsonb as v`]) {
      const err = await query.execute(db.kysely).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as AppError).code).toBe('VALIDATION');
      expect((err as AppError).retryable).toBe(false);
      expect((err as Error).message).toBe('text: holds a NUL character (U+0000), which cannot be stored');
      // The driver's error stays for the log, not for the client.
      expect(((err as Error).cause as { code?: string }).code).toMatch(/^22(021|P05)$/);
    }
    // The connection is still usable: the refusal was the statement's, not the pool's.
    const ok = await sql<{ v: string }>`select ${'fine'}::text as v`.execute(db.kysely);
    expect(ok.rows[0].v).toBe('fine');
  });
});
