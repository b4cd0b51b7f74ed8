import { pino, type Logger } from 'pino';
import { createRequire } from 'node:module';
import type pinoPrettyModule from 'pino-pretty';

/**
 * Paths that may carry secret material anywhere in a log object. pino's redact replaces them
 * before serialisation, so a careless `log.info({ req })` still cannot leak a signature.
 */
export const REDACT_PATHS = [
  'apiSecret',
  '*.apiSecret',
  'secret',
  '*.secret',
  'privateKey',
  '*.privateKey',
  'signature',
  '*.signature',
  'masterKey',
  'headers["x-api-sign"]',
  'headers.authorization',
  '*.headers["x-api-sign"]',
  '*.headers.authorization',
];

export interface LoggerOptions {
  level?: string;
  name?: string;
  /** Where lines go; tests pass a stream to read what was logged. */
  destination?: NodeJS.WritableStream;
  /** The one line per HTTP request (accessLoggerOf); default on. */
  requests?: boolean;
  /**
   * Lines on stdout (no `destination`): `pretty` (pino-pretty: time, level and message on one
   * coloured line, the fields after it), `json` (one JSON object a line, for log collectors), or
   * `auto` (the default): pretty when stdout is a terminal, JSON otherwise.
   */
  format?: 'auto' | 'pretty' | 'json';
}

/** Whether `createLogger` writes pretty lines to stdout for `format`. */
export function prettyLogs(format: LoggerOptions['format'] = 'auto', isTty = process.stdout.isTTY === true): boolean {
  return format === 'pretty' || (format === 'auto' && isTty);
}

/** The access logger of each logger made here: same destination and level, no redaction. */
const accessLoggers = new WeakMap<Logger, Logger>();

export function createLogger(opts: LoggerOptions = {}): Logger {
  // sonic-boom gathers lines up to 8 KiB (minLength) and writes them in one asynchronous write, so
  // a busy API writes dozens of request lines per system call instead of one. A quiet process's
  // lines wait at most `periodicFlush` ms; pino flushes what is pending when the process exits
  // (it registers that for asynchronous destinations only), and flushLogger on shutdown.
  // A person at a terminal reads pretty lines (pino-pretty in this thread: nothing to fetch or
  // spawn at run time); a pipe or a file gets JSON, what log collectors parse.
  const destination =
    opts.destination ??
    (prettyLogs(opts.format)
      ? (createRequire(import.meta.url)('pino-pretty') as typeof pinoPrettyModule)({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true, destination: 1, sync: true })
      : pino.destination({ dest: 1, sync: false, minLength: 8192, periodicFlush: 100 }));
  const common = { name: opts.name, level: opts.level ?? process.env.LOG_LEVEL ?? 'info', base: undefined };
  const logger = pino({ ...common, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, destination as pino.DestinationStream);
  // Request lines off: the access logger is silent, every other line stays.
  accessLoggers.set(logger, pino({ ...common, ...(opts.requests === false ? { level: 'silent' } : {}) }, destination as pino.DestinationStream));
  return logger;
}

/**
 * The logger for the one line per request. Its lines hold only `uuid`, `method`, `url`, `status`
 * and `ms` (scalars with none of the redacted names), so redaction could never change them, and
 * skipping it saves about 5 µs a line: pino's wildcard paths walk every object logged. It writes
 * to the same destination at the same level. A logger not made by createLogger (a test's) is its
 * own access logger.
 */
export function accessLoggerOf(logger: Logger): Logger {
  return accessLoggers.get(logger) ?? logger;
}

/**
 * Writes out what the destination still holds and resolves once it is written (or after
 * `timeoutMs`, if stdout is stuck). A shutdown must wait for this before `process.exit`: pino's
 * exit handler writes synchronously only what no asynchronous write has taken yet, so a line in a
 * write still in flight at exit (the last "stopped") would be lost.
 */
export function flushLogger(logger: Logger, timeoutMs = 2_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    timer.unref();
    try {
      logger.flush(() => {
        clearTimeout(timer);
        resolve();
      });
    } catch {
      // Nothing sensible to do if stdout is gone.
      clearTimeout(timer);
      resolve();
    }
  });
}

export type { Logger };
