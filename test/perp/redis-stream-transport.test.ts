import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { EngineCommand, EngineEvent } from '../../src/perp/engine/engine-types.ts';
import { genesisEngine } from '../../src/perp/sequencer/journal-replay.ts';
import { START_ROWS, startCommands } from '../support/journal-start.ts';
import { toCommandMessage } from '../../src/perp/sequencer/engine-gateway.ts';
import { EngineSequencer } from '../../src/perp/sequencer/engine-sequencer.ts';
import { createRedisGateway, serveEngineOverRedis } from '../../src/perp/sequencer/redis-stream-transport.ts';
import { openTestSqlite } from '../support/test-databases.ts';
import { NONCE_RETENTION_MS, createOrderNonceClaimer, type NonceClaimInput } from '../../src/perp/store/order-nonce-store.ts';
import { kyselyOf, type Db } from '../../src/storage/database.ts';
import { STREAM_ACCOUNTS, takeCommands } from '../support/perp-command-stream.ts';
import { until } from '../support/poll.ts';

const url = process.env.REDIS_URL;

/** On an empty journal the sequencer first journals START_ROWS rows (journal-start.ts), at its clock's ts (fixed here). */
const LISTED = START_ROWS;
const LISTED_AT = 1_690_000_000_000;
const listings = (): EngineCommand[] => startCommands(LISTED_AT);

/** A started sequencer on a fresh SQLite journal, and stream names under a fresh prefix. */
async function freshSequencer() {
  const p = `t:${randomBytes(4).toString('hex')}`;
  const names = { commands: `${p}:commands`, events: `${p}:events`, group: 'engine' };
  const db = await openTestSqlite();
  const admin = new Redis(url!);
  const sequencer = new EngineSequencer({ db, now: () => LISTED_AT });
  await sequencer.start();
  return { p, names, db, admin, sequencer };
}

/** Stops what a test started and deletes its streams. */
async function closeAll(h: { server: { stop(): Promise<void> }; gateway: { close(): Promise<void> }; sequencer: EngineSequencer; db: Db; admin: Redis; names: { commands: string; events: string }; p: string }): Promise<void> {
  await h.server.stop();
  await h.gateway.close();
  await h.sequencer.stop();
  await h.db.close();
  await h.admin.del(h.names.commands, h.names.events, `${h.p}:replies`);
  h.admin.disconnect();
}

/**
 * A sequencer on a fresh SQLite journal served over Redis under a fresh prefix, with a gateway, for
 * `body`; everything stopped and the streams deleted after. `body` may stop the server itself.
 */
async function overRedis(
  serverOpts: { publishEvents?: boolean; eventsMaxLen?: number; claims?: boolean; trimEveryMs?: number },
  body: (h: { sequencer: EngineSequencer; gateway: ReturnType<typeof createRedisGateway>; admin: Redis; names: { commands: string; events: string; group: string }; db: Db; stopServer(): Promise<void> }) => Promise<void>,
): Promise<void> {
  const { p, names, db, admin, sequencer } = await freshSequencer();
  const { claims, ...rest } = serverOpts;
  const nonces = claims ? createOrderNonceClaimer(db, { retentionMs: NONCE_RETENTION_MS }) : undefined;
  const server = await serveEngineOverRedis(sequencer, new Redis(url!), { ...names, blockMs: 100, ...rest, ...(nonces ? { nonces } : {}) });
  const gateway = createRedisGateway(new Redis(url!), { ...names, replyStream: `${p}:replies`, blockMs: 100 });
  let stopped = false;
  const stopServer = async () => {
    if (stopped) return;
    stopped = true;
    await server.stop();
  };
  try {
    await body({ sequencer, gateway, admin, names, db, stopServer });
  } finally {
    await closeAll({ server: { stop: stopServer }, gateway, sequencer, db, admin, names, p });
  }
}

describe.skipIf(!url)('perp engine over Redis Streams', () => {
  it('carries commands, replies and events between processes-to-be, redelivers unacknowledged commands, then reads new ones', { timeout: 60_000 }, async () => {
    const { p, names, db, admin, sequencer } = await freshSequencer();
    let server = await serveEngineOverRedis(sequencer, new Redis(url!), { ...names, blockMs: 100 });
    const gateway = createRedisGateway(new Redis(url!), { ...names, replyStream: `${p}:replies`, blockMs: 100 });
    try {
      const seen: EngineEvent[] = [];
      const off = gateway.subscribe(1, (e) => seen.push(e));
      const cmds = takeCommands(9, 'rs', 150);
      const answers = await Promise.all(cmds.map((c) => gateway.submit(c)));
      // The engine the sequencer started as: genesis, then the listings.
      const direct = genesisEngine();
      const listed = listings().map((c) => direct.apply(c));
      expect(listed.map((r) => r.code)).toEqual(Array(LISTED).fill('OK'));
      const expected = cmds.map((c) => direct.apply(c));
      expect(answers.map(({ journalSeq: _j, ...r }) => r)).toEqual(expected);
      // From seq 1: the listings' events, then the commands'.
      const events = [...listed, ...expected].flatMap((r) => r.events);
      await until(async () => seen.length, (n) => n >= events.length, 10_000);
      expect(seen).toEqual(events);
      off();

      // A resubmitted command (a client retry) is answered from the journal, not applied again.
      const again = await gateway.submit(cmds[20]);
      expect(again).toMatchObject({ resubmitted: true, journalSeq: LISTED + 21, code: expected[20].code });

      // The engine read a command and died before answering: on restart it is delivered again.
      await server.stop();
      const cmd = { kind: 'deposit' as const, id: 'after-crash', ts: 1, account: STREAM_ACCOUNTS[2], amount: 9n };
      const answer = gateway.submit(cmd);
      // (The stream is trimmed as commands are answered: the newest entry is the one to wait for.)
      const newest = async () => ((await admin.xrevrange(names.commands, '+', '-', 'COUNT', 1)) as Array<[string, string[]]>)[0]?.[1][1] ?? '';
      await until(newest, (m) => m.includes('"after-crash"'), 10_000);
      const read = (await admin.xreadgroup('GROUP', 'engine', 'engine-1', 'COUNT', 10, 'STREAMS', names.commands, '>')) as Array<[string, unknown[]]>;
      expect(read[0][1]).toHaveLength(1);
      server = await serveEngineOverRedis(sequencer, new Redis(url!), { ...names, blockMs: 100 });
      expect(await answer).toMatchObject({ ok: true, journalSeq: LISTED + 151 });
      expect(toCommandMessage(cmd).id).toBe('after-crash');
      // Past the redelivered history, new commands are read and answered too.
      const next = { kind: 'deposit' as const, id: 'after-redelivery', ts: 2, account: STREAM_ACCOUNTS[2], amount: 5n };
      expect(await gateway.submit(next)).toMatchObject({ ok: true, journalSeq: LISTED + 152 });
      // Acknowledged right after the reply is written.
      const pendingCount = async () => Number(((await admin.xpending(names.commands, 'engine')) as unknown[])[0]);
      await until(pendingCount, (n) => n === 0, 10_000);
      expect(await pendingCount()).toBe(0);
    } finally {
      await closeAll({ server, gateway, sequencer, db, admin, names, p });
    }
  });

  it('sends a group of commands (a batch of orders) contiguously: applied back to back and journalled in one commit', { timeout: 20_000 }, async () => {
    await overRedis({}, async ({ sequencer, gateway }) => {
      const cmds = takeCommands(5, 'grp', 20);
      const before = sequencer.stats.batches;
      const answers = await gateway.submitMany!(cmds);
      const direct = genesisEngine();
      for (const c of listings()) direct.apply(c);
      expect(answers.map(({ journalSeq: _j, ...r }) => r)).toEqual(cmds.map((c) => direct.apply(c)));
      expect(answers.map((a) => a.journalSeq)).toEqual(cmds.map((_, i) => LISTED + 1 + i));
      expect(sequencer.stats.batches - before).toBe(1);
    });
  });

  it('writes no event stream unless asked (PERP_ENGINE_EVENTS): commands are answered all the same', { timeout: 20_000 }, async () => {
    await overRedis({ publishEvents: false }, async ({ gateway, admin, names, stopServer }) => {
      const cmds = takeCommands(5, 'quiet', 10);
      const answers = await Promise.all(cmds.map((c) => gateway.submit(c)));
      expect(answers.map((a) => a.journalSeq)).toEqual(cmds.map((_, i) => LISTED + 1 + i));
      // stop() writes out what it still holds: with publishing on, the events would be there now.
      await stopServer();
      expect(await admin.xlen(names.events)).toBe(0);
      expect(await admin.exists(names.events)).toBe(0);
    });
  });

  it('keeps about eventsMaxLen events in the event stream, and a reader behind the trim is told of the gap instead of skipping it', { timeout: 30_000 }, async () => {
    await overRedis({ publishEvents: true, eventsMaxLen: 50 }, async ({ sequencer, gateway, admin, names, stopServer }) => {
      const cmds = takeCommands(7, 'evtrim', 400);
      await Promise.all(cmds.map((c) => gateway.submit(c)));
      await stopServer();
      const published = sequencer.lastDurableEventSeq;
      // Approximate trimming drops whole nodes of the stream (100 entries each by Redis's default):
      // well under the events published, never fewer than asked for.
      const len = await admin.xlen(names.events);
      expect(published).toBeGreaterThan(1_000);
      expect(len).toBeGreaterThanOrEqual(50);
      expect(len).toBeLessThanOrEqual(50 + 200);
      const [[lastId]] = (await admin.xrevrange(names.events, '+', '-', 'COUNT', 1)) as Array<[string, string[]]>;
      expect(lastId).toBe(`0-${published}`);
      const [[firstId]] = (await admin.xrange(names.events, '-', '+', 'COUNT', 1)) as Array<[string, string[]]>;
      const first = Number(firstId.split('-')[1]);
      // A reader from inside what is kept gets every event from there, in order and without a gap.
      const seen: number[] = [];
      const un = gateway.subscribe(first + 1, (e: EngineEvent) => seen.push(e.seq));
      await until(async () => seen.length, (n) => n >= published - first);
      un();
      expect(seen).toEqual(Array.from({ length: published - first }, (_, i) => first + 1 + i));
      // A reader from before it gets no event, only the gap.
      const early: number[] = [];
      let gap: unknown;
      const un2 = gateway.subscribe(1, (e: EngineEvent) => early.push(e.seq), (err) => (gap = err));
      await until(async () => gap, (g) => g !== undefined);
      un2();
      expect(early).toEqual([]);
      expect(gap).toMatchObject({ code: 'STORAGE_UNAVAILABLE', retryable: false });
      expect((gap as Error).message).toBe(`perp engine: events 1..${first - 1} are not in the event stream (trimmed or never written); resubscribe from a snapshot`);
    });
  });

  it('protocol 2: the engine claims the nonce a command carries before applying it; a command behind it waits for it', { timeout: 20_000 }, async () => {
    await overRedis({ claims: true }, async ({ sequencer, gateway, db }) => {
      const [alice, bob] = STREAM_ACCOUNTS;
      const order = (id: string, account: string, priceTicks: number): EngineCommand => ({ kind: 'placeOrder', id, ts: LISTED_AT, account, symbol: 'BTC-USD', side: 'BUY', type: 'LIMIT', priceTicks, sizeLots: 10 });
      const claim = (account: string, nonce: string, orderHash: string): NonceClaimInput => ({ account, nonce, orderHash, expiry: LISTED_AT + 60_000, usedAt: LISTED_AT });
      // Until an engine has answered, the API claims nonces itself.
      expect(gateway.claimsNonces!()).toBe(false);
      await gateway.submitMany!([
        { kind: 'setMarkPrice', id: 'm-1', ts: LISTED_AT, symbol: 'BTC-USD', markPriceTicks: 500_000, indexPriceTicks: 500_000 },
        { kind: 'deposit', id: 'd-1', ts: LISTED_AT, account: alice, amount: 1_000_000_000_000n },
        { kind: 'deposit', id: 'd-2', ts: LISTED_AT, account: bob, amount: 1_000_000_000_000n },
      ]);
      expect(gateway.claimsNonces!()).toBe(true);

      // The order with its claim, then right behind it (one pipeline) a cancel that needs it applied first.
      const first = order('ord:a1', alice, 499_000);
      const [placed, canceled] = await gateway.submitMany!(
        [first, { kind: 'cancelOrder', id: 'c-1', ts: LISTED_AT, account: alice, orderId: 1 }],
        [claim(alice, '7', '0xa1'), undefined],
      );
      expect(placed).toMatchObject({ ok: true, order: { orderId: 1 } });
      expect(canceled).toMatchObject({ ok: true });
      // Another order under the same nonce: refused before the engine, nothing applied.
      const seq = sequencer.nextSeq;
      expect(await gateway.submit(order('ord:a2', alice, 498_000), claim(alice, '7', '0xa2'))).toEqual({
        ok: false, code: 'NONCE_USED', message: 'the order nonce is already used by another order of this account', events: [], journalSeq: null,
      });
      expect(sequencer.nextSeq).toBe(seq);
      // The same order again: its claim is its own, and the journal answers it as before.
      expect(await gateway.submit(first, claim(alice, '7', '0xa1'))).toMatchObject({ ok: true, resubmitted: true, journalSeq: placed.journalSeq });
      // Nonces are per account.
      expect(await gateway.submit(order('ord:b1', bob, 497_000), claim(bob, '7', '0xb1'))).toMatchObject({ ok: true, order: { orderId: 2 } });
      const rows = await kyselyOf(db).selectFrom('perp_order_nonces').select(['account', 'nonce', 'order_hash']).orderBy('account').execute();
      expect(rows).toEqual([
        { account: alice, nonce: '7', order_hash: '0xa1' },
        { account: bob, nonce: '7', order_hash: '0xb1' },
      ].sort((x, y) => x.account.localeCompare(y.account)));
    });
  });

  it('an engine started without a claimer says so (the API keeps claiming), and refuses a command that carries a claim: nothing applied', { timeout: 20_000 }, async () => {
    await overRedis({}, async ({ sequencer, gateway }) => {
      await gateway.submit({ kind: 'setMarkPrice', id: 'm-1', ts: LISTED_AT, symbol: 'BTC-USD', markPriceTicks: 500_000, indexPriceTicks: 500_000 });
      expect(gateway.claimsNonces!()).toBe(false);
      const seq = sequencer.nextSeq;
      const cmd: EngineCommand = { kind: 'deposit', id: 'd-claim', ts: LISTED_AT, account: STREAM_ACCOUNTS[0], amount: 1n };
      await expect(gateway.submit(cmd, { account: STREAM_ACCOUNTS[0], nonce: '1', orderHash: '0x01', expiry: LISTED_AT, usedAt: LISTED_AT })).rejects.toMatchObject({ code: 'CONFLICT', retryable: false });
      expect(sequencer.nextSeq).toBe(seq);
    });
  });

  it('trims the command stream below the oldest unacknowledged entry: answered commands go, a pending one and what follows stay', { timeout: 30_000 }, async () => {
    const { p, names, db, admin, sequencer } = await freshSequencer();
    const opts = { ...names, blockMs: 100, trimEveryMs: 0 };
    let server = await serveEngineOverRedis(sequencer, new Redis(url!), opts);
    const gateway = createRedisGateway(new Redis(url!), { ...names, replyStream: `${p}:replies`, blockMs: 100 });
    try {
      const ids = async () => (await admin.xrange(names.commands, '-', '+')).map(([id]) => id);
      await Promise.all(takeCommands(5, 'trim', 20).map((c) => gateway.submit(c)));
      // stop() waits for the trims: the engine leaves only what it did not answer (nothing).
      await server.stop();
      expect(await ids()).toEqual([]);
      // Another consumer of the group reads an entry and never acknowledges it (an engine that died).
      const ghost = await admin.xadd(names.commands, '*', 'm', '{}');
      await admin.xreadgroup('GROUP', names.group, 'ghost', 'COUNT', 1, 'STREAMS', names.commands, '>');
      server = await serveEngineOverRedis(sequencer, new Redis(url!), opts);
      const later = await Promise.all(takeCommands(6, 'trim2', 5).map((c) => gateway.submit(c)));
      expect(later.every((r) => r.journalSeq !== null)).toBe(true);
      await server.stop();
      // Nothing below the oldest pending entry is deleted: the ghost and the five answered after it stay.
      const kept = await ids();
      expect(kept).toHaveLength(6);
      expect(kept[0]).toBe(ghost);
    } finally {
      await closeAll({ server, gateway, sequencer, db, admin, names, p });
    }
  });

  it('a reply stream expires an hour after its last reply, and a gateway that closes deletes its own', { timeout: 20_000 }, async () => {
    const { p, names, db, admin, sequencer } = await freshSequencer();
    const server = await serveEngineOverRedis(sequencer, new Redis(url!), { ...names, blockMs: 100 });
    const replyStream = `${p}:replies`;
    const gateway = createRedisGateway(new Redis(url!), { ...names, replyStream, blockMs: 100 });
    try {
      await gateway.submit({ kind: 'setMarkPrice', id: 'm-ttl', ts: LISTED_AT, symbol: 'BTC-USD', markPriceTicks: 500_000, indexPriceTicks: 500_000 });
      const ttl = await admin.pttl(replyStream);
      expect(ttl).toBeGreaterThan(3_500_000);
      expect(ttl).toBeLessThanOrEqual(3_600_000);
      await gateway.close();
      expect(await admin.exists(replyStream)).toBe(0);
    } finally {
      await closeAll({ server, gateway, sequencer, db, admin, names, p });
    }
  });
});
