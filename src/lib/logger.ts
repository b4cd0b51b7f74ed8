import { pino, type Logger } from 'pino';

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
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  // Asynchronous writes to stdout by default: lines written while a write is in flight go out
  // together. pino flushes what is pending when the process exits; flushLogger does it on shutdown.
  const destination = opts.destination ?? pino.destination({ dest: 1, sync: false });
  return pino(
    {
      name: opts.name,
      level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: undefined,
    },
    destination as pino.DestinationStream,
  );
}

/**
 * Starts writing out what the destination still holds (on shutdown). What is left when the process
 * exits right after is written synchronously by pino's own exit handler.
 */
export function flushLogger(logger: Logger): void {
  try {
    logger.flush();
  } catch {
    // Nothing sensible to do if stdout is gone.
  }
}

export type { Logger };
