import { pino, type Logger } from 'pino';
import { createBufferedDestination } from './buffered-destination.ts';

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
  // Buffered writes to stdout by default: a write per request line costs more than the request
  // itself. flushLogger (and process exit) writes out what is buffered.
  const destination = opts.destination ?? createBufferedDestination(1);
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

export interface AccessLine {
  uuid: string;
  method: string;
  url: string;
  status: number;
  /** Handling time in milliseconds; written with two decimals. */
  ms: number;
}

let lastTime = 0;
let lastTimeText = '0';

/**
 * Date.now() as text, reused within the millisecond: an epoch in ms is not a small integer, so each
 * String() of it is a slow runtime conversion, and at thousands of lines a second most share one.
 */
function timeText(): string {
  const t = Date.now();
  if (t !== lastTime) {
    lastTime = t;
    lastTimeText = String(t);
  }
  return lastTimeText;
}

/** `ms` rounded to hundredths, as text ("0.12", "3", "1.5"), from small integers only. */
export function hundredthsText(ms: number): string {
  const h = Math.round(ms * 100);
  if (!(h >= 0 && h < 2 ** 30)) return String(Math.round(ms * 100) / 100);
  const whole = (h / 100) | 0;
  const frac = h - whole * 100;
  if (frac === 0) return String(whole);
  return frac % 10 === 0 ? `${whole}.${frac / 10}` : `${whole}.${frac < 10 ? '0' : ''}${frac}`;
}

/**
 * Writes the one access line per request straight to `logger`'s destination, in pino's JSON line
 * format (level 30). That line has a fixed shape with no secret-bearing field, so it skips pino's
 * serialiser and redaction, which together cost more than the signature check of a request.
 * Returns undefined when the logger is above `info`.
 */
export function createAccessLogger(logger: Logger): ((line: AccessLine) => void) | undefined {
  if (!logger.isLevelEnabled('info')) return undefined;
  const stream = (logger as unknown as Record<symbol, { write(s: string): unknown }>)[pino.symbols.streamSym];
  return (l) => {
    stream.write(
      `{"level":30,"time":${timeText()},"uuid":"${l.uuid}","method":"${l.method}","url":${JSON.stringify(l.url)},"status":${l.status},"ms":${hundredthsText(l.ms)},"msg":"request"}\n`,
    );
  };
}

/** Writes out what the buffered destination still holds (on shutdown). */
export function flushLogger(logger: Logger): void {
  try {
    logger.flush();
  } catch {
    // Nothing sensible to do if stdout is gone.
  }
}

export type { Logger };
