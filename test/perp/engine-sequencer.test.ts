import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { DEFAULT_INSTRUMENTS } from '../../src/perp/engine/instruments.ts';
import { createInProcessGateway } from '../../src/perp/sequencer/engine-gateway.ts';
import { EngineSequencer, loadEngineFromJournal } from '../../src/perp/sequencer/engine-sequencer.ts';
import { commandToText, resultSummaryToJson } from '../../src/perp/sequencer/engine-codec.ts';
import { genesisEngine } from '../../src/perp/sequencer/journal-replay.ts';
import {
  appendJournal,
  findJournalByCommandIds,
  lastJournalSeq,
  latestSnapshots,
  pruneSnapshots,
  readJournalAfter,
  readJournalTail,
  saveSnapshot,
  type JournalRow,
} from '../../src/perp/store/engine-journal-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { ENGINE_RULES, type EngineCommand, type EngineEvent } from '../../src/perp/engine/engine-types.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';
import { START_ROWS, expectStartRows, startCommands, startedEngine } from '../support/journal-start.ts';
import { STREAM_ACCOUNTS, takeCommands } from '../support/perp-command-stream.ts';
import { until } from '../support/poll.ts';

/** On its first start the sequencer journals START_ROWS rows (journal-start.ts): user commands start at LISTED + 1. */
const LISTED = START_ROWS;
/** The sequencers' clock in these tests: the start commands' ts (and the snapshots' created_at). */
const LISTED_AT = 1_690_000_000_000;
const now = () => LISTED_AT;
const listings = (): EngineCommand[] => startCommands(LISTED_AT);
const listedEngine = () => startedEngine(LISTED_AT);

const row = (seq: number, over: Partial<JournalRow> = {}): JournalRow => ({
  seq,
  commandId: `c-${seq}`,
  kind: 'deposit',
  command: `{"kind":"deposit","id":"c-${seq}","amount":"${seq}"}`,
  ts: 1_700_000_000_000 + seq,
  code: 'OK',
  lastEventSeq: seq,
  result: '{"ok":true,"code":"OK"}',
  ...over,
});

describe.each(testDatabases)('perp engine journal ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it('appends a batch in one transaction and reads it back in order', async () => {
    expect(await lastJournalSeq(db)).toBe(0);
    await appendJournal(db, [row(1), row(2), row(3)]);
    await appendJournal(db, [row(4, { code: 'INVALID', commandId: 'x"\'y' })]);
    expect(await lastJournalSeq(db)).toBe(4);
    expect(await readJournalAfter(db, 1)).toEqual([row(2), row(3), row(4, { code: 'INVALID', commandId: 'x"\'y' })]);
    expect((await readJournalAfter(db, 0, 2)).map((r) => r.seq)).toEqual([1, 2]);
    expect((await readJournalTail(db, 2)).map((r) => r.seq)).toEqual([3, 4]);
    expect((await findJournalByCommandIds(db, ['c-2', 'nope', 'x"\'y'])).map((r) => r.seq).sort()).toEqual([2, 4]);
    // A duplicate command id fails the whole batch: none of its rows is written.
    await expect(appendJournal(db, [row(5), row(6, { commandId: 'c-1' })])).rejects.toThrow();
    expect(await lastJournalSeq(db)).toBe(4);
  });

  it('stores every character of a row exactly, in a batch of any size (PostgreSQL sends each column as one array)', async () => {
    // What an array literal must escape, and what a careless one would turn into NULL or split.
    const awkward = ['', 'NULL', 'null', '{}', '{"a":[1,2]}', 'a,b', 'back\\slash', 'quote"d', "it's", 'line\nbreak\ttab', 'ünïcødé ✓ 𝄞', ' spaced ', '\\"{,}"\\'];
    const rows = Array.from({ length: 37 }, (_, i) =>
      row(i + 1, { commandId: `c-${i + 1}-${awkward[i % awkward.length]}`, command: awkward[i % awkward.length], result: awkward[(i + 5) % awkward.length], ts: 2 ** 53 - 1 - i, lastEventSeq: 9_007_199_254_740 + i }),
    );
    await appendJournal(db, rows);
    expect(await readJournalAfter(db, 0)).toEqual(rows);
  });

  it('keeps snapshots newest first and prunes the older ones', async () => {
    for (const lastSeq of [10, 20, 30, 40]) await saveSnapshot(db, { lastSeq, stateHash: `h${lastSeq}`, snapshot: `{"s":${lastSeq}}`, createdAt: lastSeq });
    expect((await latestSnapshots(db, 2)).map((s) => s.lastSeq)).toEqual([40, 30]);
    expect(await pruneSnapshots(db, 2)).toBe(2);
    expect(await latestSnapshots(db, 10)).toEqual([
      { lastSeq: 40, stateHash: 'h40', snapshot: '{"s":40}', createdAt: 40 },
      { lastSeq: 30, stateHash: 'h30', snapshot: '{"s":30}', createdAt: 30 },
    ]);
  });

  it('group-commits concurrent submits and answers each only after its row is durable', async () => {
    const seq = new EngineSequencer({ db, snapshotEvery: 0, now });
    await seq.start();
    // The listings were written one at a time, each answered before the next.
    const listed = seq.stats;
    expect(listed).toMatchObject({ batches: LISTED, rows: LISTED, maxBatchRows: 1 });
    const cmds = takeCommands(1, 'g', 400);
    const checks: Promise<void>[] = [];
    const answers = await Promise.all(
      cmds.map((c) =>
        seq.submit(c).then((r) => {
          // Answered: the row is committed, and the sequencer counts it durable.
          expect(seq.durableJournalSeq).toBeGreaterThanOrEqual(r.journalSeq ?? Infinity);
          checks.push(findJournalByCommandIds(db, [c.id]).then((rows) => expect(rows.map((x) => x.seq)).toEqual([r.journalSeq])));
          return r;
        }),
      ),
    );
    await Promise.all(checks);
    expect(answers.map((r) => r.journalSeq)).toEqual(cmds.map((_, i) => LISTED + i + 1));
    const { batches, rows, maxBatchRows } = seq.stats;
    expect(rows - listed.rows).toBe(400);
    expect(batches - listed.batches).toBeLessThan(400 / 4);
    expect(maxBatchRows).toBeGreaterThan(10);
    // Refused commands are journalled with their code too.
    const journal = await readJournalAfter(db, 0);
    expectStartRows(journal);
    expect(journal.slice(LISTED).map((r) => r.code)).toEqual(answers.map((r) => r.code));
    expect(answers.some((r) => !r.ok)).toBe(true);
    await seq.stop();
  });

  it('keeps a submitMany group in one journal commit, past maxBatch and behind a commit in flight', async () => {
    const seq = new EngineSequencer({ db, snapshotEvery: 0, maxBatch: 3, now });
    await seq.start();
    const cmds = takeCommands(2, 'mg', 12);
    const before = seq.stats;
    // A single command first starts a commit; the group arrives while it is being written.
    const single = seq.submit(cmds[0]);
    const group = seq.submitMany(cmds.slice(1, 9));
    const after = seq.submit(cmds[9]);
    const answers = [await single, ...(await group), await after];
    expect(answers.map((r) => r.journalSeq)).toEqual(cmds.slice(0, 10).map((_, i) => LISTED + i + 1));
    const journal = await readJournalAfter(db, LISTED);
    expect(journal.map((r) => r.commandId)).toEqual(cmds.slice(0, 10).map((c) => c.id));
    const stats = seq.stats;
    // The eight of the group went together though maxBatch is 3.
    expect(stats.maxBatchRows).toBeGreaterThanOrEqual(8);
    expect(stats.rows - before.rows).toBe(10);
    await seq.stop();
  });

  it('restarts from snapshot + journal to the live state, and a full replay agrees', async () => {
    const live = new EngineSequencer({ db, snapshotEvery: 300, keepSnapshots: 2, now });
    await live.start();
    const cmds = takeCommands(2, 'r', 1_500);
    await Promise.all(cmds.slice(0, 1_300).map((c) => live.submit(c)));
    for (const c of cmds.slice(1_300)) await live.submit(c);
    const hash = live.engine.stateHash();
    const lastEvent = live.engine.lastSeq;
    expect(live.nextSeq).toBe(LISTED + 1_501);
    // No stop(): as after a crash, only the periodic snapshots exist; abandoned once the two
    // newest are written (the one at 1 500 may still be on its way, as the checks below allow).
    await until(() => latestSnapshots(db, 10), (s) => s.length === 2 && s[0].lastSeq >= 1_200, 20_000);
    await live.abandon();
    const snaps = await latestSnapshots(db, 10);
    expect(snaps.length).toBe(2);
    // Snapshots fall on multiples of snapshotEvery in journal seq (listings included): 1 500 or, not
    // yet written, 1 200.
    expect(snaps[0].lastSeq).toBeGreaterThanOrEqual(1_200);

    const again = new EngineSequencer({ db, now });
    await again.start();
    expect(again.engine.stateHash()).toBe(hash);
    expect(again.engine.lastSeq).toBe(lastEvent);
    // The instruments are in the journal already: nothing listed again.
    expect(again.nextSeq).toBe(LISTED + 1_501);
    const full = await loadEngineFromJournal(db, undefined, { ignoreSnapshots: true });
    expect(full.engine.stateHash()).toBe(hash);
    // A fresh engine fed the listings and the commands directly agrees as well.
    const { engine: direct } = listedEngine();
    for (const c of cmds) direct.apply(c);
    expect(direct.stateHash()).toBe(hash);

    // The sequence continues: the next command gets journal seq LISTED + 1501 and the next event seq.
    const r = await again.submit({ kind: 'deposit', id: 'after', ts: 1, account: STREAM_ACCOUNTS[0], amount: 5n });
    expect(r.journalSeq).toBe(LISTED + 1_501);
    expect(r.events[0].seq).toBe(lastEvent + 1);
    await again.stop();
    expect((await latestSnapshots(db, 1))[0].lastSeq).toBe(LISTED + 1_501);
  });

  it('answers a resubmitted command id with its original result, from memory and from the journal', async () => {
    const seq = new EngineSequencer({ db, recentResults: 5, now });
    await seq.start();
    const cmds = takeCommands(3, 'i', 30);
    const first = await Promise.all(cmds.map((c) => seq.submit(c)));
    const again = await seq.submit(cmds[29]);
    expect(again).toMatchObject({ resubmitted: true, journalSeq: LISTED + 30, code: first[29].code });
    expect(again.events).toEqual([]);
    if ('order' in first[29]) expect((again as unknown as { order: unknown }).order).toEqual(first[29].order);
    // Beyond the memory: looked up in the journal, nothing applied, no row added.
    const hash = seq.engine.stateHash();
    const old = await seq.submit(cmds[10]);
    expect(old).toMatchObject({ resubmitted: true, journalSeq: LISTED + 11, code: first[10].code, ok: first[10].ok, events: [] });
    if ('order' in first[10]) expect((old as unknown as { order: unknown }).order).toEqual(first[10].order);
    expect(seq.engine.stateHash()).toBe(hash);
    expect(await lastJournalSeq(db)).toBe(LISTED + 30);
    // Concurrent duplicates of a new id: applied once.
    const dep = { kind: 'deposit' as const, id: 'dup', ts: 1, account: STREAM_ACCOUNTS[1], amount: 7n };
    const [a, b] = await Promise.all([seq.submit(dep), seq.submit(dep)]);
    expect(a.journalSeq).toBe(LISTED + 31);
    expect(b).toMatchObject({ journalSeq: LISTED + 31, resubmitted: true });
    expect(await lastJournalSeq(db)).toBe(LISTED + 31);
    await seq.stop();
    // After a restart the journal still answers.
    const restarted = new EngineSequencer({ db, recentResults: 5, now });
    await restarted.start();
    expect(restarted.nextSeq).toBe(LISTED + 32);
    expect(await restarted.submit(cmds[3])).toMatchObject({ resubmitted: true, journalSeq: LISTED + 4 });
    await restarted.stop();
  });

  it('fails the commands of a batch that cannot be written and rebuilds from the journal', async () => {
    const seq = new EngineSequencer({ db, recoveryRetryMs: 10, now });
    await seq.start();
    const cmds = takeCommands(4, 'f', 60);
    await Promise.all(cmds.slice(0, 40).map((c) => seq.submit(c)));
    const durableHash = seq.engine.stateHash();
    const lastEvent = seq.engine.lastSeq;
    // Another writer takes journal seq LISTED + 41: the sequencer's next batch hits its primary key.
    expect(seq.nextSeq).toBe(LISTED + 41);
    await appendJournal(db, [
      { seq: LISTED + 41, commandId: 'foreign', kind: 'withdraw', command: '{}', ts: 0, code: 'INVALID', lastEventSeq: lastEvent, result: '{"ok":false,"code":"INVALID","message":"x"}' },
    ]);
    const outcomes = await Promise.allSettled(cmds.slice(40).map((c) => seq.submit(c)));
    expect(outcomes.every((o) => o.status === 'rejected')).toBe(true);
    expect((outcomes[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'STORAGE_UNAVAILABLE', data: { outcome: 'unknown' } });
    await until(async () => seq.state, (s) => s === 'running', 20_000);
    expect(seq.state).toBe('running');
    expect(seq.stats.recoveries).toBe(1);
    // Rebuilt to the journal: the failed commands left no trace, and they can be resubmitted.
    expect(seq.engine.stateHash()).toBe(durableHash);
    expect(seq.nextSeq).toBe(LISTED + 42);
    const retried = await Promise.all(cmds.slice(40).map((c) => seq.submit(c)));
    expect(retried[0].journalSeq).toBe(LISTED + 42);
    const { engine: direct } = listedEngine();
    for (const c of cmds) direct.apply(c);
    expect(seq.engine.stateHash()).toBe(direct.stateHash());
    await seq.stop();
  });

  it('journals instrument settings: a restart with another taker fee keeps the balances the trades were made under and journals the change', async () => {
    const first = new EngineSequencer({ db, now });
    await first.start();
    const cmds = takeCommands(6, 's', 200);
    for (const c of cmds) await first.submit(c);
    const hash = first.engine.stateHash();
    const balances = STREAM_ACCOUNTS.map((a) => first.engine.getAccount(a)?.collateral);
    const feeBefore = first.engine.getAccount(first.engine.feeAccountAddress)!.feesReceived;
    expect(feeBefore > 0n).toBe(true);
    await first.stop();

    // The configuration now says 0.1 % taker fee on every instrument: the replay must not apply it to old trades.
    const changed = DEFAULT_INSTRUMENTS.map((c) => ({ ...c, takerFeeRatePpm: 1_000 }));
    const second = new EngineSequencer({ db, now, engineOptions: { instruments: changed } });
    await second.start();
    expect(STREAM_ACCOUNTS.map((a) => second.engine.getAccount(a)?.collateral)).toEqual(balances);
    expect(second.engine.getAccount(second.engine.feeAccountAddress)!.feesReceived).toBe(feeBefore);
    expect(second.engine.instrument('BTC-USD')!.takerFeeRatePpm).toBe(1_000);
    // One updateInstrument row per instrument, after the 200 commands.
    const tail = (await readJournalAfter(db, LISTED + 200)).map((r) => [r.kind, r.code]);
    expect(tail).toEqual(DEFAULT_INSTRUMENTS.map(() => ['updateInstrument', 'OK']));
    const after = second.engine.stateHash();
    await second.stop();

    // A replay from genesis with either configuration reaches the same state: the journal decides.
    for (const instruments of [DEFAULT_INSTRUMENTS, changed]) {
      const full = await loadEngineFromJournal(db, { instruments }, { ignoreSnapshots: true });
      expect(full.engine.stateHash()).toBe(after);
    }
    expect(after).not.toBe(hash);
  });

  it('a journal from before rule versions replays under rules 1, and its first start on this release journals setRules once', async () => {
    // An earlier release's journal: its listings and commands applied under rules 1, no setRules row.
    const old = genesisEngine();
    const oldListings: EngineCommand[] = DEFAULT_INSTRUMENTS.map((config, i) => ({ kind: 'addInstrument', id: `instrument:add:${config.symbol}:${i + 1}`, ts: LISTED_AT, config }));
    const rows: JournalRow[] = [...oldListings, ...takeCommands(3, 'o', 400)].map((c, i) => {
      const r = old.apply(c);
      return { seq: i + 1, commandId: c.id, kind: c.kind, command: commandToText(c), ts: c.ts, code: r.code, lastEventSeq: old.lastSeq, result: resultSummaryToJson(r) };
    });
    expect(rows.filter((r) => r.code === 'OK').length).toBeGreaterThan(250);
    await appendJournal(db, rows);

    const seq = new EngineSequencer({ db, now });
    await seq.start();
    const raised = rows.length + 1;
    expect((await readJournalAfter(db, rows.length)).map((r) => [r.seq, r.kind, r.commandId, r.code, r.lastEventSeq])).toEqual([
      [raised, 'setRules', `rules:${ENGINE_RULES}:${raised}`, 'OK', old.lastSeq],
    ]);
    expect(seq.nextSeq).toBe(raised + 1);
    expect(seq.engine.rules).toBe(ENGINE_RULES);
    // The old rows replayed to the old engine's state; only the rules differ.
    expect(old.apply({ kind: 'setRules', id: 'x', ts: 1, rules: ENGINE_RULES }).ok).toBe(true);
    expect(seq.engine.stateHash()).toBe(old.stateHash());
    await seq.stop();

    // Once raised, never again: from the stop's snapshot, and from genesis.
    const again = new EngineSequencer({ db, now });
    await again.start();
    expect(again.nextSeq).toBe(raised + 1);
    expect(again.engine.rules).toBe(ENGINE_RULES);
    expect(again.engine.stateHash()).toBe(old.stateHash());
    await again.stop();
    const full = await loadEngineFromJournal(db, undefined, { ignoreSnapshots: true });
    expect(full.engine.stateHash()).toBe(old.stateHash());
  });

  it('checks a replay by state hash: a journal row changed under its snapshots is found, not replayed into another state', async () => {
    const live = new EngineSequencer({ db, now, snapshotEvery: 50, keepSnapshots: 3 });
    await live.start();
    const cmds = takeCommands(7, 'h', 180);
    for (const c of cmds) await live.submit(c);
    await live.stop();
    // A deposit between the two newest snapshots, its amount altered: it still replays OK with
    // the same events, only the state differs, which only the state hash can tell.
    const [newest, older] = await latestSnapshots(db, 2);
    const rows = await readJournalAfter(db, older.lastSeq, newest.lastSeq - older.lastSeq);
    const deposit = rows.find((r) => r.kind === 'deposit' && r.code === 'OK')!;
    const altered = JSON.parse(deposit.command);
    altered.amount = String(BigInt(altered.amount) + 1n);
    await sql`update perp_journal set command = ${JSON.stringify(altered)} where seq = ${deposit.seq}`.execute(db.kysely);
    await expect(loadEngineFromJournal(db, undefined)).rejects.toThrow(/replays to a state other than its snapshot/);
  });

  it('a read barrier waits for the commands applied before it, and after a failed write shows the journal\'s state', async () => {
    const seq = new EngineSequencer({ db, recoveryRetryMs: 10, now });
    await seq.start();
    const cmds = takeCommands(5, 'b', 40);
    await Promise.all(cmds.slice(0, 20).map((c) => seq.submit(c)));
    // Applied at once, durable one group commit later: the barrier resolves only then.
    const pending = seq.submit(cmds[20]);
    const applied = seq.nextSeq - 1;
    expect(seq.durableJournalSeq).toBeLessThan(applied);
    await seq.readBarrier();
    expect(seq.durableJournalSeq).toBeGreaterThanOrEqual(applied);
    await pending;
    const durableHash = seq.engine.stateHash();
    // A write that fails: a read taken while its commands are applied sees the rebuilt state, not them.
    await appendJournal(db, [
      { seq: seq.nextSeq, commandId: 'foreign-b', kind: 'withdraw', command: '{}', ts: 0, code: 'INVALID', lastEventSeq: seq.engine.lastSeq, result: '{"ok":false,"code":"INVALID","message":"x"}' },
    ]);
    const failing = Promise.allSettled(cmds.slice(21).map((c) => seq.submit(c)));
    expect(seq.engine.stateHash()).not.toBe(durableHash);
    await seq.readBarrier();
    expect(seq.engine.stateHash()).toBe(durableHash);
    expect((await failing).every((o) => o.status === 'rejected')).toBe(true);
    await seq.stop();
  });

  it('serves the gateway over broker-shaped messages, and events in seq order', async () => {
    const seq = new EngineSequencer({ db, now });
    await seq.start();
    const gw = createInProcessGateway(seq, { serialize: true });
    const seen: EngineEvent[] = [];
    const unsubscribe = gw.subscribe(1, (e) => seen.push(e));
    const cmds = takeCommands(5, 'w', 200);
    const answers = await Promise.all(cmds.map((c) => gw.submit(c)));
    const { engine: direct, events: listed } = listedEngine();
    expect(listed.map((e) => e.type)).toEqual(Array(DEFAULT_INSTRUMENTS.length).fill('instrumentConfigured'));
    const expected = cmds.map((c) => direct.apply(c));
    expect(answers.map(({ journalSeq: _j, ...r }) => r)).toEqual(expected);
    // From seq 1: the listings' events, then the commands'.
    expect(seen).toEqual([...listed, ...expected.flatMap((r) => r.events)]);
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => i + 1));
    unsubscribe();
    // A late subscriber gets the retained events from its seq.
    const late: number[] = [];
    seq.subscribe(seen.length - 2, (e) => late.push(e.seq));
    expect(late).toEqual([seen.length - 2, seen.length - 1, seen.length]);
    await seq.stop();
  });
});

describe.each(testDatabases.filter((t) => t.name === 'postgres'))('perp single writer ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it('refuses a second sequencer on the same journal until the first stops', async () => {
    const first = new EngineSequencer({ db });
    await first.start();
    const second = new EngineSequencer({ db });
    await expect(second.start()).rejects.toMatchObject({ code: 'CONFLICT' });
    await first.submit({ kind: 'deposit', id: 'd1', ts: 1, account: STREAM_ACCOUNTS[0], amount: 1n });
    await first.stop();
    const third = new EngineSequencer({ db });
    await third.start();
    expect(third.nextSeq).toBe(LISTED + 2);
    await third.stop();
  });
});

describe.each(testDatabases)('perp event catch-up ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  it('regenerates events older than memory from snapshot + journal, then continues live without a gap', async () => {
    const seq = new EngineSequencer({ db, eventBuffer: 10, snapshotEvery: 50, now });
    await seq.start();
    const cmds = takeCommands(6, 'e', 400);
    await Promise.all(cmds.slice(0, 300).map((c) => seq.submit(c)));
    // Every event from seq 1: the listings' first.
    const { engine: direct, events: listed } = listedEngine();
    const all = [...listed, ...cmds.map((c) => direct.apply(c)).flatMap((r) => r.events)];
    const durable = seq.lastDurableEventSeq;
    expect(durable).toBeGreaterThan(100);
    for (const from of [1, Math.floor(durable / 2)]) {
      const got: EngineEvent[] = [];
      const errors: unknown[] = [];
      seq.subscribe(from, (e) => got.push(e), (e) => errors.push(e));
      // More commands while the catch-up runs.
      await Promise.all(cmds.slice(300).map((c) => seq.submit(c)));
      await until(async () => got.length + errors.length, (n) => n >= all.length - from + 1 || errors.length > 0, 20_000);
      expect(errors).toEqual([]);
      expect(got).toEqual(all.slice(from - 1));
      // The other half of the stream for the next round: same commands, answered from memory.
    }
    await seq.stop();
  });

  it('keeps at least the last eventBuffer events in memory while it trims them a quarter at a time, and never more than a quarter over', async () => {
    const seq = new EngineSequencer({ db, eventBuffer: 40, snapshotEvery: 0, now });
    await seq.start();
    const cmds = takeCommands(8, 'b', 120);
    const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);
    let fromMemory = 0;
    // Subscribers 51 behind (40 + a quarter is 50): never served from memory, always by a replay of the journal.
    const replayed: Array<{ from: number; got: number[]; atOnce: number }> = [];
    for (const c of cmds) {
      await seq.submit(c);
      const durable = seq.lastDurableEventSeq;
      // Served from memory means delivered inside subscribe(), before it returns; a subscriber older
      // than memory is answered later, by a journal replay.
      if (durable >= 40) {
        const got: number[] = [];
        seq.subscribe(durable - 39, (e) => got.push(e.seq))();
        expect(got).toEqual(range(durable - 39, 40));
        fromMemory++;
      }
      if (durable > 51) {
        const r = { from: durable - 50, got: [] as number[], atOnce: 0 };
        seq.subscribe(r.from, (e) => r.got.push(e.seq))();
        r.atOnce = r.got.length;
        replayed.push(r);
      }
    }
    expect(fromMemory).toBeGreaterThan(80);
    expect(replayed.length).toBeGreaterThan(40);
    expect(replayed.filter((r) => r.atOnce > 0)).toEqual([]);
    // Every replay ends, with the 51 events it was asked for, before the sequencer stops.
    await until(async () => replayed.every((r) => r.got.length >= 51), (done) => done, 20_000);
    for (const r of replayed) expect(r.got).toEqual(range(r.from, 51));
    await seq.stop();
  });
});

describe('perp journal schema', () => {
  it('stores bigint seqs as numbers on both engines', async () => {
    const db = await testDatabases[0].open();
    try {
      await appendJournal(db, [row(2 ** 40)]);
      const { rows } = await sql<{ seq: unknown }>`select seq from perp_journal`.execute(db.kysely);
      expect(Number(rows[0].seq)).toBe(2 ** 40);
      expect((await readJournalTail(db, 1))[0].seq).toBe(2 ** 40);
    } finally {
      await db.close();
    }
  });
});
