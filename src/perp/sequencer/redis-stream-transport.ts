/**
 * The engine gateway carried by Redis Streams, for an API and an engine in separate processes
 * (docs/perp-sequencer.md, "Messages"). Three streams:
 *
 * - commands (`perp:commands`): API → engine, consumed by the engine through a consumer group, so
 *   an entry read but not acknowledged (the engine died) is read again on restart. A redelivered
 *   command is answered from the journal by its id, never applied twice. An entry is acknowledged
 *   once its reply is written, and its reply is written only after the command is durable.
 * - replies (one stream per API process, named in each command's `replyTo`).
 * - events (`perp:events`): the engine writes each durable event with the stream id `0-<seq>`, so
 *   the stream is in seq order, a rewrite after a restart is refused by Redis rather than
 *   duplicated, and a subscriber resumes with `XREAD … 0-<last seq>`.
 *
 * Each message is one field `m` holding the JSON of a CommandMessage, ReplyMessage or EventMessage.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { AppError } from '../../errors/app-error.ts';
import type { EngineCommand, EngineEvent } from '../engine/engine-types.ts';
import {
  NONCE_CLAIM_PROTOCOL,
  fromCommandMessage,
  fromEventMessage,
  fromReplyMessage,
  commandMessageText,
  eventMessageText,
  replyMessageText,
  type CommandMessage,
  type EngineGateway,
  type EventMessage,
  type ReplyMessage,
} from './engine-gateway.ts';
import type { EngineSequencer, SequencedResult } from './engine-sequencer.ts';
import { duplicateRedis } from '../../storage/redis-client.ts';
import type { JournalNonceClaim as NonceClaimInput, JournalNonceClaimer as OrderNonceClaimer } from '../store/engine-journal-store.ts';

export interface RedisStreamNames {
  /** Default `perp:commands`. */
  commands?: string;
  /** Default `perp:events`. */
  events?: string;
  /** Consumer group of the engine on the command stream. Default `perp-engine`. */
  group?: string;
}

/** The streams of one engine under a prefix (PERP_ENGINE_STREAM): `<prefix>:commands`, `<prefix>:events`. */
export function perpStreams(prefix: string): Required<RedisStreamNames> {
  return { commands: `${prefix}:commands`, events: `${prefix}:events`, group: `${prefix}:engine` };
}

export interface RedisEngineServerOptions extends RedisStreamNames {
  /** Consumer name within the group. Default `engine-1`. */
  consumer?: string;
  /** Commands read per XREADGROUP. Default 1 000. */
  readCount?: number;
  /** Longest block of one read, ms (also how fast stop() returns). Default 500. */
  blockMs?: number;
  /** Replies kept per reply stream (approximate trim). Default 10 000. */
  replyMaxLen?: number;
  /**
   * A reply stream nobody writes to for this long is deleted by Redis (ms, default one hour): each
   * API process has a stream of its own, and one that exits without closing its gateway (a crash,
   * a kill) left it behind, about 27 MB at its trim length.
   */
  replyTtlMs?: number;
  /**
   * Least time between trims of the command stream, ms (default 5 000): entries below the group's
   * oldest unacknowledged one are deleted. Nothing trimmed it before: Redis kept every order sent.
   */
  trimEveryMs?: number;
  /**
   * Whether durable events are written to the event stream (`PERP_ENGINE_EVENTS`). Default true
   * here; the perp-engine role writes them only when asked: no role of this release reads them, and
   * writing about nine entries an order was a sixth of the engine loop's time per order (issue 40).
   */
  publishEvents?: boolean;
  /**
   * About how many events the event stream keeps (`XADD … MAXLEN ~`, default 100 000, as the
   * engine's own buffer of recent events): it grew without bound before. A reader further behind
   * than this finds a gap at its cursor and is told so (the gateway's `subscribe` fails with a
   * gap error) instead of silently skipping events.
   */
  eventsMaxLen?: number;
  /**
   * Claims the order nonces commands carry (protocol 2, `CommandMessage.claim`) before they are
   * applied: the perp APIs then make no database write of their own per order (issue 40, item 5).
   * The claimer must be the one every API process of an older release uses too
   * (`createOrderNonceClaimer`: an insert that skips taken rows decides), so that both kinds can
   * run at once during a rolling upgrade. Without it a command carrying a claim is refused.
   */
  nonces?: OrderNonceClaimer;
  onError?: (err: unknown) => void;
}

const field = (entry: [string, string[]]): string | undefined => {
  const f = entry[1];
  for (let i = 0; i + 1 < f.length; i += 2) if (f[i] === 'm') return f[i + 1];
  return undefined;
};

type StreamReply = Array<[string, Array<[string, string[]]>]> | null;

/**
 * Runs the engine side: reads command messages (first the ones delivered before and never
 * acknowledged, then new ones), submits them, writes replies and acknowledges; publishes durable
 * events to the event stream from where it stands. `redis` must be a connection of its own (it
 * blocks on reads). Answers `stop()`.
 */
export async function serveEngineOverRedis(
  sequencer: EngineSequencer,
  redis: Redis,
  opts: RedisEngineServerOptions = {},
): Promise<{ stop(): Promise<void> }> {
  const commands = opts.commands ?? 'perp:commands';
  const events = opts.events ?? 'perp:events';
  const group = opts.group ?? 'perp-engine';
  const consumer = opts.consumer ?? 'engine-1';
  const readCount = opts.readCount ?? 1_000;
  const blockMs = opts.blockMs ?? 500;
  const replyMaxLen = opts.replyMaxLen ?? 10_000;
  const replyTtlMs = opts.replyTtlMs ?? 3_600_000;
  const eventsMaxLen = Math.max(1, opts.eventsMaxLen ?? 100_000);
  const onError = opts.onError ?? (() => undefined);
  const nonces = opts.nonces;
  // What replies tell the APIs this engine takes: claims only where it can make them.
  const speaks = nonces ? NONCE_CLAIM_PROTOCOL : 1;
  const writer = duplicateRedis(redis);

  try {
    await redis.xgroup('CREATE', commands, group, '0', 'MKSTREAM');
  } catch (err) {
    if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
  }

  let eventChain: Promise<unknown> = Promise.resolve();
  let eventBatch: EngineEvent[] = [];
  const flushEvents = () => {
    if (eventBatch.length === 0) return;
    const batch = eventBatch;
    eventBatch = [];
    const pipe = writer.pipeline();
    // Approximate trimming (`~`) removes whole radix-tree nodes, so it costs Redis next to nothing.
    for (const e of batch) pipe.xadd(events, 'MAXLEN', '~', eventsMaxLen, `0-${e.seq}`, 'm', eventMessageText(e));
    // An id not above the stream's last (a rewrite after a restart) is refused: nothing duplicated.
    eventChain = eventChain.then(() => pipe.exec()).catch(onError);
  };
  let unsubscribe = () => {};
  if (opts.publishEvents ?? true) {
    // Events: continue after the last one the stream holds (a stream left off for a while resumes
    // from the engine's retained or regenerated events, without a gap).
    const last = (await writer.xrevrange(events, '+', '-', 'COUNT', 1)) as Array<[string, string[]]>;
    const fromSeq = last.length > 0 ? Number(last[0][0].split('-')[1]) + 1 : 1;
    unsubscribe = sequencer.subscribe(
      fromSeq,
      (e) => {
        if (eventBatch.length === 0) queueMicrotask(flushEvents);
        eventBatch.push(e);
      },
      onError,
    );
  }

  let running = true;
  const inflight = new Set<Promise<void>>();

  // Replies and acknowledgements go out together, one pipeline per turn of the loop: the sequencer
  // answers a group commit's commands in one turn, and one write of all their replies and one XACK
  // of all their entries costs a fraction of two round trips each (issue 40 item 5). Each reply is
  // queued before the acknowledgement of its entry, and a reply is only ever written after its
  // command is durable: a connection lost mid-pipeline leaves the entries pending (redelivered, then
  // answered from the journal), and a reply Redis refuses on its own is logged, its client's retry
  // with the same id answered from the journal too.
  let outbox: Array<{ entryId: string; replyTo?: string; payload?: string }> = [];
  let flushed: Promise<void> | undefined;
  const send = (entryId: string, replyTo: string | undefined, payload: string | undefined): Promise<void> => {
    outbox.push({ entryId, replyTo, payload });
    flushed ??= new Promise<void>((resolve) => {
      queueMicrotask(() => {
        const batch = outbox;
        outbox = [];
        flushed = undefined;
        const pipe = writer.pipeline();
        const streams = new Set<string>();
        for (const o of batch) {
          if (o.replyTo && o.payload !== undefined) {
            pipe.xadd(o.replyTo, 'MAXLEN', '~', replyMaxLen, '*', 'm', o.payload);
            streams.add(o.replyTo);
          }
        }
        for (const stream of streams) pipe.pexpire(stream, replyTtlMs);
        pipe.xack(commands, group, ...batch.map((o) => o.entryId));
        pipe
          .exec()
          .then((results) => {
            for (const [err] of results ?? []) if (err) onError(err);
          }, onError)
          .finally(() => {
            resolve();
            trimSoon();
          });
      });
    });
    return flushed;
  };

  // Commands are applied in the stream's order. One that carries a nonce claim waits for it (the
  // claims of one read share a statement), and every command after it waits too: a cancel sent
  // right behind its order must not reach the engine first.
  let applied: Promise<unknown> = Promise.resolve();
  const apply = (m: CommandMessage): Promise<SequencedResult> => {
    const cmd = fromCommandMessage(m);
    const claim = m.claim === undefined ? undefined : nonces ? nonces.claim(m.claim) : Promise.reject(noClaimer());
    // Caught here as well: the command's own answer still carries the claim's failure.
    claim?.catch(() => undefined);
    // Wrapped, so that `handed` settles once the command is handed to the sequencer: the next
    // command waits for that, not for this one to be durable.
    const handed = applied.then(async (): Promise<{ answer: Promise<SequencedResult> | SequencedResult }> => {
      if ((await claim) === 'used') return { answer: nonceUsed() };
      return { answer: sequencer.submit(cmd) };
    });
    applied = handed.then(
      () => undefined,
      () => undefined,
    );
    return handed.then((h) => h.answer);
  };

  // The command stream keeps what the group has not acknowledged and no more. Below its oldest
  // pending entry everything was answered (a reply is written before its entry is acknowledged);
  // with none pending, everything up to the newest entry read was. Entries not read yet are newer.
  const trimEveryMs = opts.trimEveryMs ?? 5_000;
  let lastRead: string | undefined;
  let lastTrim = 0;
  let trimming = false;
  /** Acknowledgements came while a trim ran: one more when it ends. */
  let trimAgain = false;
  const trimSoon = (): void => {
    if (trimming) {
      trimAgain = true;
      return;
    }
    if (lastRead === undefined || Date.now() - lastTrim < trimEveryMs) return;
    trimming = true;
    trimAgain = false;
    lastTrim = Date.now();
    trimRun = trimOnce()
      .catch(onError)
      .finally(() => {
        trimming = false;
        if (trimAgain && running) trimSoon();
      });
  };
  let trimRun: Promise<void> = Promise.resolve();
  async function trimOnce(): Promise<void> {
    const read = lastRead;
    if (read === undefined) return;
    const [pending, oldest] = (await writer.xpending(commands, group)) as [number, string | null, ...unknown[]];
    const [ms, n] = read.split('-');
    await writer.xtrim(commands, 'MINID', pending > 0 && oldest !== null ? oldest : `${ms}-${BigInt(n) + 1n}`);
  }

  const handle = (entryId: string, text: string | undefined): Promise<void> => {
    let msg: CommandMessage | undefined;
    try {
      msg = text === undefined ? undefined : (JSON.parse(text) as CommandMessage);
    } catch {
      msg = undefined;
    }
    if (msg === undefined || msg.type !== 'command' || typeof msg.id !== 'string') {
      return send(entryId, undefined, undefined);
    }
    const m = msg;
    // A command this engine cannot read (a newer API's) is answered with the refusal, not executed.
    const p = Promise.resolve()
      .then(() => apply(m))
      .then(
        (result) => replyMessageText(m.id, { result }, speaks),
        (error) => replyMessageText(m.id, { error }, speaks),
      )
      .then((reply) => send(entryId, m.replyTo, reply))
      .catch(onError)
      .finally(() => inflight.delete(p));
    inflight.add(p);
    return p;
  };

  const loop = (async () => {
    // Entries delivered to this consumer before and never acknowledged come first.
    let cursor = '0';
    while (running) {
      try {
        const res = (await redis.xreadgroup(
          'GROUP', group, consumer, 'COUNT', readCount, 'BLOCK', blockMs, 'STREAMS', commands, cursor,
        )) as StreamReply;
        const entries = res?.[0]?.[1] ?? [];
        // The history of pending entries is read through to its end (an empty page), then new
        // ones. Switching only from '0' left an engine that took over unacknowledged commands
        // reading an exhausted history for ever: every later command went unanswered.
        if (cursor !== '>' && entries.length === 0) cursor = '>';
        for (const entry of entries) {
          void handle(entry[0], field(entry));
          if (cursor !== '>') cursor = entry[0];
          lastRead = entry[0];
        }
        // A bounded amount in flight: the journal's batches, not Redis, set the pace.
        while (inflight.size > readCount * 4) await Promise.race(inflight);
      } catch (err) {
        if (!running) break;
        onError(err);
        await new Promise((r) => setTimeout(r, blockMs));
      }
    }
  })();

  return {
    async stop() {
      running = false;
      await loop;
      await Promise.allSettled([...inflight]);
      // A last trim once every answer is acknowledged: a stopped engine leaves the stream holding
      // only what it did not answer.
      await trimRun;
      await trimOnce().catch(onError);
      unsubscribe();
      flushEvents();
      await eventChain;
      writer.disconnect();
    },
  };
}

/** The answer to an order whose nonce another order of the account used: refused before the engine. */
function nonceUsed(): SequencedResult {
  return { ok: false, code: 'NONCE_USED', message: 'the order nonce is already used by another order of this account', events: [], journalSeq: null };
}

function noClaimer(): AppError {
  return new AppError('CONFLICT', 'perp engine: a command carries an order nonce claim, and this engine was started without a claimer; nothing was applied', { retryable: false });
}

export interface RedisGatewayOptions extends RedisStreamNames {
  /** This client's reply stream. Default `perp:replies:<random>`. */
  replyStream?: string;
  /** A submit without a reply by then rejects (retryable: resubmit with the same id). Default 10 000 ms. */
  timeoutMs?: number;
  blockMs?: number;
}

/**
 * The API side: an EngineGateway whose submit writes a command message and waits for its reply,
 * and whose subscribe reads the event stream. `redis` is used for writes; blocking reads use
 * duplicates of it. `close()` stops the readers.
 */
export function createRedisGateway(redis: Redis, opts: RedisGatewayOptions = {}): EngineGateway & { close(): Promise<void> } {
  const commands = opts.commands ?? 'perp:commands';
  const events = opts.events ?? 'perp:events';
  const replyStream = opts.replyStream ?? `perp:replies:${randomBytes(6).toString('hex')}`;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const blockMs = opts.blockMs ?? 500;
  const waiting = new Map<string, Array<{ resolve: (r: SequencedResult) => void; reject: (e: unknown) => void }>>();
  const readers = new Set<Redis>();
  let open = true;
  /**
   * The protocol of the engine's last reply (1 until one says more). Claims go with commands only
   * once an engine has said it claims them; an older engine put back in its place answers 1 again,
   * and refuses (never applies) a command with a claim sent meanwhile.
   */
  let engineSpeaks = 1;

  const replies = duplicateRedis(redis);
  readers.add(replies);
  const replyLoop = (async () => {
    let cursor = '0';
    while (open) {
      try {
        const res = (await replies.xread('COUNT', 1_000, 'BLOCK', blockMs, 'STREAMS', replyStream, cursor)) as StreamReply;
        for (const entry of res?.[0]?.[1] ?? []) {
          cursor = entry[0];
          const reply = JSON.parse(field(entry) ?? 'null') as ReplyMessage | null;
          if (reply === null) continue;
          engineSpeaks = typeof reply.speaks === 'number' ? reply.speaks : 1;
          const ws = waiting.get(reply.id);
          if (ws === undefined) continue;
          waiting.delete(reply.id);
          for (const w of ws) {
            try {
              w.resolve(fromReplyMessage(reply));
            } catch (err) {
              w.reject(err);
            }
          }
        }
      } catch {
        if (open) await new Promise((r) => setTimeout(r, blockMs));
      }
    }
  })();

  /** The reply to the command message `id`, once it comes (or a retryable refusal after timeoutMs). */
  const replyTo = (id: string): Promise<SequencedResult> => {
    const answer = new Promise<SequencedResult>((resolve, reject) => {
      const w = {
        resolve: (r: SequencedResult) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e: unknown) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const timer = setTimeout(() => {
        const list = waiting.get(id) ?? [];
        const i = list.indexOf(w);
        if (i >= 0) list.splice(i, 1);
        if (list.length === 0) waiting.delete(id);
        reject(new AppError('STORAGE_UNAVAILABLE', 'perp engine: no reply in time, resubmit with the same id', { retryable: true }));
      }, timeoutMs);
      const ws = waiting.get(id) ?? [];
      ws.push(w);
      waiting.set(id, ws);
    });
    return answer;
  };

  return {
    claimsNonces: () => engineSpeaks >= NONCE_CLAIM_PROTOCOL,
    async submit(cmd: EngineCommand, claim?: NonceClaimInput) {
      const text = commandMessageText(cmd, replyStream, claim);
      const answer = replyTo(cmd.id);
      await redis.xadd(commands, '*', 'm', text);
      return answer;
    },
    // One MULTI: the commands are contiguous in the stream, so the engine reads and applies them
    // back to back and journals them in one commit (unless its read of up to readCount entries ends
    // inside the group).
    async submitMany(cmds: readonly EngineCommand[], claims?: ReadonlyArray<NonceClaimInput | undefined>) {
      const texts = cmds.map((cmd, i) => commandMessageText(cmd, replyStream, claims?.[i]));
      const answers = cmds.map((cmd) => replyTo(cmd.id));
      const tx = redis.multi();
      for (const text of texts) tx.xadd(commands, '*', 'm', text);
      try {
        await tx.exec();
      } catch (err) {
        // Nothing was sent: the waits end with the write's error, not later with a timeout.
        for (const a of answers) a.catch(() => undefined);
        throw err;
      }
      return Promise.all(answers);
    },
    subscribe(fromSeq, listener, onError) {
      const reader = duplicateRedis(redis);
      readers.add(reader);
      let active = true;
      void (async () => {
        let next = Math.max(1, Math.trunc(fromSeq));
        let cursor = `0-${next - 1}`;
        while (active && open) {
          try {
            const res = (await reader.xread('COUNT', 1_000, 'BLOCK', blockMs, 'STREAMS', events, cursor)) as StreamReply;
            for (const entry of res?.[0]?.[1] ?? []) {
              if (!active) break;
              const seq = Number(entry[0].slice(entry[0].indexOf('-') + 1));
              if (seq > next) {
                // The stream does not hold events next … seq - 1: trimmed past this reader
                // (eventsMaxLen), or never written (a stream turned on after the engine's retained
                // events). A subscriber must not go on as if it had them.
                active = false;
                onError?.(new AppError('STORAGE_UNAVAILABLE', `perp engine: events ${next}..${seq - 1} are not in the event stream (trimmed or never written); resubscribe from a snapshot`, { retryable: false }));
                break;
              }
              cursor = entry[0];
              next = seq + 1;
              listener(fromEventMessage(JSON.parse(field(entry) ?? 'null') as EventMessage));
            }
          } catch (err) {
            if (!active || !open) break;
            onError?.(err);
            await new Promise((r) => setTimeout(r, blockMs));
          }
        }
      })();
      return () => {
        active = false;
        readers.delete(reader);
        reader.disconnect();
      };
    },
    async close() {
      open = false;
      for (const ws of waiting.values()) for (const w of ws) w.reject(new AppError('STORAGE_UNAVAILABLE', 'perp engine: gateway closed', { retryable: true }));
      waiting.clear();
      for (const r of readers) r.disconnect();
      await replyLoop;
      // Nobody reads this process's replies any more (the engine's expiry covers a process that
      // never gets here).
      await redis.unlink(replyStream).catch(() => undefined);
    },
  };
}
