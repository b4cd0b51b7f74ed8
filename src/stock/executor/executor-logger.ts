import type { Logger } from '../../lib/logger.ts';

/** The part of a pino logger the executor uses; tests pass a collecting stub or a real logger. */
export type ExecutorLogger = Pick<Logger, 'info' | 'warn' | 'error' | 'debug'>;
