import { StorageUnavailableError, ValidationError } from '../errors/app-error.ts';

/**
 * Classifying driver errors. better-sqlite3 raises SqliteError with `code` like `SQLITE_BUSY`;
 * pg raises DatabaseError with a five-character SQLSTATE `code`, or a Node socket error (`ECONNREFUSED`)
 * or a plain Error with a message for pool and protocol failures.
 */

const NODE_NET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EPIPE',
]);

// 08xxx connection exceptions, 57P01-57P03 shutdown / cannot connect now, 53300 too many
// connections, 3D000 database missing, 28xxx authentication: all mean "no usable connection".
const PG_UNAVAILABLE_PREFIXES = ['08', '57P0', '53300', '3D000', '28'];

const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'not queryable',
  'Client was closed',
  'Cannot use a pool after calling end',
];

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** True when the error means the database cannot be reached or is too busy: worth retrying later. */
export function isUnavailableError(err: unknown): boolean {
  if (err instanceof StorageUnavailableError) return true;
  if (err instanceof AggregateError) return err.errors.some(isUnavailableError);
  const code = codeOf(err);
  if (code !== undefined) {
    if (NODE_NET_CODES.has(code)) return true;
    if (code.startsWith('SQLITE_')) {
      return (
        code.startsWith('SQLITE_BUSY') ||
        code.startsWith('SQLITE_LOCKED') ||
        code.startsWith('SQLITE_CANTOPEN') ||
        code.startsWith('SQLITE_IOERR') ||
        code === 'SQLITE_FULL'
      );
    }
    if (code.length === 5 && PG_UNAVAILABLE_PREFIXES.some((p) => code.startsWith(p))) return true;
  }
  const message = err instanceof Error ? err.message : '';
  return PG_CONNECTION_MESSAGES.some((m) => message.includes(m));
}

/**
 * PostgreSQL refuses a NUL (U+0000) in a text value (22021, "invalid byte sequence for encoding
 * UTF8: 0x00"; the pg driver sends JavaScript strings as valid UTF-8, so NUL is the only way to meet
 * it) and in jsonb (22P05). SQLite stores one. Such a text can only come from a client's input that
 * no pattern of the contract stopped: the client's error (400), not the server's (500), on every
 * route at once. The hostile-input fuzz (test/stock/stock-hostile-input.test.ts) found two such
 * fields one by one.
 */
const PG_UNSTORABLE_TEXT = new Set(['22021', '22P05']);

/**
 * Wraps unavailability errors in StorageUnavailableError (keeping the driver error as `cause`), and
 * a text PostgreSQL cannot store in a ValidationError.
 */
export function toStorageError(err: unknown): unknown {
  if (err instanceof StorageUnavailableError) return err;
  if (isUnavailableError(err)) return new StorageUnavailableError({ cause: err });
  const code = codeOf(err);
  if (code !== undefined && PG_UNSTORABLE_TEXT.has(code)) return new ValidationError('text', 'holds a NUL character (U+0000), which cannot be stored', { cause: err });
  return err;
}

/** A primary-key or unique-constraint violation, on either engine. */
export function isUniqueViolation(err: unknown): boolean {
  const code = codeOf(err);
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
