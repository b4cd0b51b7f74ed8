/**
 * Remembers which key built which calldata (a key without a bound wallet proves it "sent" a
 * transaction this way). Records are buffered and written in one transaction per flush: a
 * synchronous, durable insert per calldata request would cost an fsync each. A recording request
 * flushes first, so on one instance nothing is ever missed; across instances the window is one flush
 * interval, far shorter than the time a transaction takes to be mined.
 */
import type { Logger } from '../lib/logger.ts';
import type { Db } from '../storage/database.ts';
import { recordCalldataBatch } from './store/tx-record-store.ts';

export interface CalldataJournal {
  remember(record: { calldataHash: string; apiKey: string; kind: string; createdAt: number }): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function createCalldataJournal(opts: { db: Db; flushMs?: number; logger?: Logger }): CalldataJournal {
  let pending: Array<{ calldataHash: string; apiKey: string; kind: string; createdAt: number }> = [];
  let writing: Promise<void> = Promise.resolve();

  function flush(): Promise<void> {
    if (pending.length === 0) return writing;
    const batch = pending;
    pending = [];
    writing = writing
      .then(() => recordCalldataBatch(opts.db, batch))
      .catch((err) => {
        // Keep them for the next flush: a storage outage must not lose what keys built.
        pending = batch.concat(pending);
        opts.logger?.warn({ code: (err as { code?: string }).code, records: batch.length }, 'calldata journal flush failed');
      });
    return writing;
  }

  const timer = setInterval(() => void flush(), opts.flushMs ?? 50);
  timer.unref();

  return {
    remember(record) {
      pending.push(record);
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
