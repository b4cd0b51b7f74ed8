/**
 * Issue 40, item 4: `kill -9` between answer and commit loses no acknowledged signed order and
 * accepts no replayed one (docs/perp-sequencer.md "Nonces across a crash").
 *
 * A child process (order-kill-replay-child.ts) serves the perp API over HTTP with the real engine
 * on a database in a temp dir (SQLite, the nonces claimed in the journal's commits as the perp-engine
 * role claims them; a PostgreSQL schema of its own too when DATABASE_URL is set, with the API's own
 * claimer as a perp API in another process uses it).
 * This process is the load client: 48 senders POST signed orders (distinct nonces, buyers and
 * sellers around one price, so about half trade; one request in five a batch of 4 orders of one
 * wallet) and record which were acknowledged (code 0, with their orderId) and which were sent but
 * never answered. The child is SIGKILLed at a random moment (300–1,500 ms after the first answer),
 * restarted on the same data, and after each restart:
 * - every acknowledged order's command (`ord:<orderHash>`) is journalled exactly once, under the
 *   orderId it was answered with, and the API reads it by that id;
 * - each acknowledged signed order sent again is answered as that same order (`duplicate: true`),
 *   and the journal and the engine's state hash are unchanged by all of them;
 * - a different order signed with an acknowledged order's nonce is refused with NONCE_USED (51013);
 * - an order sent but never answered is journalled once or not at all; one that is absent is
 *   executed once when sent now (one journal row, a new orderId), and answered as a duplicate after.
 * Then a second load on the restarted child, a second kill, the same checks.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { sql } from 'kysely';
import { hexToBytes, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { PerpClient } from '@tokex/sdk';
import { openDatabase, type Db, type OpenDatabaseOptions } from '../../src/storage/database.ts';
import { orderType } from '../../src/perp/order-typed-data.ts';
import { perpDomain } from '../../src/perp/perp-key-service.ts';
import type { JournalRow } from '../../src/perp/store/engine-journal-store.ts';
import { uniqueSchemaName } from '../support/test-databases.ts';
import { KILL_CHAIN_ID, KILL_SYMBOL, KILL_VAULT } from './order-kill-replay-child.ts';
import { readWholeJournal } from '../support/journal-read.ts';

const CHILD = resolve(import.meta.dirname, 'order-kill-replay-child.ts');
const WALLETS = 8;
const SENDERS = 48;
/** Orders in each batch request. */
const BATCH = 4;
/** More than the child can take before the latest kill (1.5 s after the load starts). */
const ORDERS_PER_RUN = 4_000;
const NONCE_USED = 51013;

interface NativeSign {
  ecdsaSign(msg32: Uint8Array, seckey: Uint8Array): { signature: Uint8Array; recid: number };
}
const secp = createRequire(import.meta.url)('secp256k1/bindings') as NativeSign;
const domain = perpDomain(KILL_CHAIN_ID, KILL_VAULT);

interface Wallet {
  address: `0x${string}`;
  privateKey: Hex;
  apiKey: string;
  apiSecret: string;
}

interface Signed {
  wallet: number;
  message: Record<string, unknown>;
  signature: Hex;
  orderHash: string;
}

/** The venue's EIP-712 order signed with libsecp256k1 over its digest (viem's signing is ~30× slower). */
function sign(w: Wallet, wallet: number, fields: Record<string, unknown>): Signed {
  const typed = orderType.build(domain, fields);
  const orderHash = orderType.hash(domain, typed.message as Record<string, unknown>);
  const { signature: rs, recid } = secp.ecdsaSign(hexToBytes(orderHash as Hex), hexToBytes(w.privateKey));
  const signature = `0x${Buffer.from(rs).toString('hex')}${(27 + recid).toString(16)}` as Hex;
  return { wallet, message: typed.message as Record<string, unknown>, signature, orderHash: orderHash.toLowerCase() };
}

/** Order `i` of a run: wallets in turn, even ones sell, odd ones buy, prices around 200 so that about half trade. */
function orderFields(w: Wallet, wallet: number, nonce: bigint, i: number, expiry: string): Record<string, unknown> {
  const sell = wallet % 2 === 0;
  return {
    account: w.address, symbol: KILL_SYMBOL, side: sell ? 'SELL' : 'BUY', orderType: 'LIMIT', size: '1',
    price: (200 + (sell ? -1 : 1) * ((i % 7) - 3) * 0.01).toFixed(2), timeInForce: 'GTC', reduceOnly: false, clientOrderId: '',
    nonce: String(nonce), expiry,
  };
}

interface Child {
  proc: ChildProcessByStdio<Writable, Readable, Readable>;
  url: string;
  keys: Map<string, { apiKey: string; apiSecret: string }>;
  exited: Promise<NodeJS.Signals | number | null>;
  /** The next `state` line: journal next seq and engine state hash, once every applied command is durable. */
  state(): Promise<{ nextSeq: number; hash: string }>;
}

async function startChild(env: Record<string, string>): Promise<Child> {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += String(d)));
  const exited = new Promise<NodeJS.Signals | number | null>((res) => proc.on('exit', (code, signal) => res(signal ?? code)));
  const keys = new Map<string, { apiKey: string; apiSecret: string }>();
  const stateWaiters: Array<(s: { nextSeq: number; hash: string }) => void> = [];
  const url = await new Promise<string>((res, rej) => {
    createInterface({ input: proc.stdout }).on('line', (line) => {
      const [tag, a, b, c] = line.split(' ');
      if (tag === 'key') keys.set(a.toLowerCase(), { apiKey: b, apiSecret: c });
      else if (tag === 'ready') res(a);
      else if (tag === 'state') stateWaiters.shift()?.({ nextSeq: Number(a), hash: b });
    });
    void exited.then((how) => rej(new Error(`order kill child exited (${how}) before ready: ${stderr}`)));
  });
  return {
    proc, url, keys, exited,
    state: () =>
      new Promise((res) => {
        stateWaiters.push(res);
        proc.stdin.write('state\n');
      }),
  };
}

async function kill(child: Child): Promise<void> {
  child.proc.kill('SIGKILL');
  expect(await child.exited).toBe('SIGKILL');
}

type Outcome = { kind: 'acked'; orderId: string } | { kind: 'refused'; code: number; msg: string } | { kind: 'unanswered'; error: string };

/** Runs `f` over `items` with `width` at a time. */
async function eachLimited<T>(items: readonly T[], width: number, f: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) await f(items[next++]);
  }));
}

const orderIdOf = (row: JournalRow): string => String((JSON.parse(row.result) as { order?: { orderId?: number } }).order?.orderId);

const targets: Array<{ name: string; setup(): { env: Record<string, string>; open: OpenDatabaseOptions; cleanup(): Promise<void> } }> = [
  {
    name: 'sqlite',
    setup() {
      const dir = mkdtempSync(join(tmpdir(), 'tokex-order-kill-'));
      const sqlitePath = join(dir, 'perp.sqlite');
      // The one-process default: nonces claimed in the journal's commits, the commits on the
      // journal's writer thread (the PostgreSQL run below keeps the API's own claimer, as perp APIs
      // in other processes use it, and its commits on the thread).
      return { env: { KR_SQLITE_PATH: sqlitePath, KR_NONCES: 'journal', KR_JOURNAL: 'worker' }, open: { sqlitePath, migrate: false }, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  ...(process.env.DATABASE_URL
    ? [
        {
          name: 'postgres',
          setup() {
            const url = process.env.DATABASE_URL as string;
            const schema = uniqueSchemaName('okill');
            return {
              env: { KR_PG_URL: url, KR_PG_SCHEMA: schema },
              open: { url, schema, migrate: false },
              async cleanup() {
                const db = await openDatabase({ url, migrate: false });
                await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db.kysely);
                await db.close();
              },
            };
          },
        },
      ]
    : []),
];

describe.each(targets)('signed orders under kill -9 ($name)', ({ setup }) => {
  it('loses no acknowledged order and accepts no replayed one, across two kills', { timeout: 240_000 }, async () => {
    const t = setup();
    const wallets: Wallet[] = Array.from({ length: WALLETS }, () => {
      const privateKey = generatePrivateKey();
      return { address: privateKeyToAccount(privateKey).address, privateKey, apiKey: '', apiSecret: '' };
    });
    const base = { ...t.env, KR_MASTER: randomBytes(32).toString('hex'), KR_WALLETS: wallets.map((w) => w.address).join(',') };
    // Checked once: the native signature is the one viem's signTypedData makes.
    const probe = sign(wallets[0], 0, orderFields(wallets[0], 0, 1n, 0, String(Date.now() + 3_600_000)));
    expect(probe.signature).toBe(await privateKeyToAccount(wallets[0].privateKey).signTypedData(orderType.build(domain, probe.message) as never));

    let child: Child | undefined = await startChild({ ...base, KR_FIRST: '1' });
    let nonce = 1_000n;
    try {
      for (const w of wallets) Object.assign(w, child.keys.get(w.address.toLowerCase()));
      expect(wallets.every((w) => w.apiKey !== '')).toBe(true);
      const clientOf = (url: string) => wallets.map((w) => new PerpClient({ baseUrl: url, apiKey: w.apiKey, apiSecret: w.apiSecret, chainId: KILL_CHAIN_ID, retry: false }));
      const post = (clients: PerpClient[], o: Signed) => clients[o.wallet].request<{ orderId: string; duplicate: boolean }>('POST', 'orders', { body: { message: o.message, signature: o.signature } });

      for (const run of [1, 2]) {
        // ---- the load, and the kill at a random moment of it
        const expiry = String(Date.now() + 3_600_000);
        // Requests of one order, and every fifth a batch of BATCH orders of one wallet (`POST orders/batch`).
        const requests: Signed[][] = [];
        for (let i = 0, made = 0; made < ORDERS_PER_RUN; i++) {
          const w = i % WALLETS;
          const n = i % 5 === 4 ? BATCH : 1;
          requests.push(Array.from({ length: n }, (_, k) => sign(wallets[w], w, orderFields(wallets[w], w, ++nonce, i + k, expiry))));
          made += n;
        }
        const outcome = new Map<Signed, Outcome>();
        const clients = clientOf(child.url);
        let next = 0;
        let dead = false;
        let firstAck!: () => void;
        const acking = new Promise<void>((r) => (firstAck = r));
        const answered = (o: Signed, r: { code: number; msg?: string; orderId?: string }) => {
          outcome.set(o, r.code === 0 ? { kind: 'acked', orderId: r.orderId! } : { kind: 'refused', code: r.code, msg: r.msg ?? '' });
          if (r.code === 0) firstAck();
        };
        const senders = Array.from({ length: SENDERS }, async () => {
          while (!dead && next < requests.length) {
            const req = requests[next++];
            try {
              if (req.length === 1) {
                const r = await post(clients, req[0]);
                answered(req[0], { code: r.code, msg: r.msg, orderId: r.data?.orderId });
              } else {
                const r = await clients[req[0].wallet].request<{ results: Array<{ code: number; msg?: string; order?: { orderId: string } }> }>('POST', 'orders/batch', {
                  body: { orders: req.map((o) => ({ message: o.message, signature: o.signature })) },
                });
                if (r.code !== 0) for (const o of req) answered(o, { code: r.code, msg: r.msg });
                else req.forEach((o, k) => answered(o, { code: r.data!.results[k].code, msg: r.data!.results[k].msg, orderId: r.data!.results[k].order?.orderId }));
              }
            } catch (err) {
              for (const o of req) outcome.set(o, { kind: 'unanswered', error: String(err) });
              return;
            }
          }
        });
        // The kill at a random moment once orders are being answered (the first start's JIT warm-up is slow on a busy machine).
        await Promise.race([acking, Promise.all(senders)]);
        const killAfterMs = 300 + Math.floor(Math.random() * 1_200);
        await new Promise((r) => setTimeout(r, killAfterMs));
        await kill(child);
        dead = true;
        await Promise.all(senders);
        const acked = [...outcome].flatMap(([o, x]) => (x.kind === 'acked' ? [{ o, orderId: x.orderId }] : []));
        const unanswered = [...outcome].flatMap(([o, x]) => (x.kind === 'unanswered' ? [o] : []));
        expect([...outcome.values()].filter((x) => x.kind === 'refused'), 'no order is refused under load').toEqual([]);
        expect(acked.length, `orders acknowledged before the kill, ${killAfterMs} ms after the first`).toBeGreaterThan(0);

        // ---- restart on the same data
        child = await startChild(base);
        const again = clientOf(child.url);
        const db = await openDatabase(t.open);
        try {
          let rows = await readWholeJournal(db);
          expect(rows.map((r) => r.seq), 'the journal has no gap').toEqual(rows.map((_, i) => i + 1));
          const count = (rs: JournalRow[]) => {
            const n = new Map<string, JournalRow[]>();
            for (const r of rs) n.set(r.commandId, [...(n.get(r.commandId) ?? []), r]);
            return n;
          };
          let byId = count(rows);
          // Every acknowledged order journalled exactly once, under the orderId it was answered with.
          const lost = acked.filter(({ o, orderId }) => byId.get(`ord:${o.orderHash}`)?.length !== 1 || orderIdOf(byId.get(`ord:${o.orderHash}`)![0]) !== orderId);
          expect(lost.map(({ orderId }) => orderId), 'acknowledged orders not journalled once under their id').toEqual([]);
          // … and read back by the API under that id.
          await eachLimited(acked, 8, async ({ o, orderId }) => {
            const r = await again[o.wallet].request<{ orderId: string }>('GET', `orders/${orderId}`);
            expect([r.code, r.data?.orderId]).toEqual([0, orderId]);
          });
          // The sent-but-unanswered ones: at most once each.
          expect(unanswered.filter((o) => (byId.get(`ord:${o.orderHash}`)?.length ?? 0) > 1)).toEqual([]);
          const absent = unanswered.filter((o) => !byId.has(`ord:${o.orderHash}`));
          const present = unanswered.filter((o) => byId.has(`ord:${o.orderHash}`));
          // The nonce claims of this run's orders: every journalled order's is on disk with its hash (it
          // committed before the order reached the engine, or with its journal row), so no other
          // order can take that nonce.
          const claims = await db.kysely.selectFrom('perp_order_nonces').select(['account', 'nonce', 'order_hash'])
            .where('nonce', 'in', [...outcome.keys()].map((o) => String(o.message.nonce))).execute();
          const claimOf = new Map(claims.map((c) => [`${c.account} ${c.nonce}`, c.order_hash]));
          const claimKey = (o: Signed) => `${String(o.message.account).toLowerCase()} ${String(o.message.nonce)}`;
          const journalled = [...acked.map(({ o }) => o), ...present];
          expect(journalled.filter((o) => claimOf.get(claimKey(o)) !== o.orderHash), 'journalled orders without their nonce claim').toEqual([]);
          // The absent ones whose nonce was claimed before the kill: the window the resend must cover.
          const claimed = absent.filter((o) => claimOf.has(claimKey(o)));
          const before = await child.state();
          expect(before.nextSeq, 'the restart added no journal row').toBe(rows.length + 1);

          // Each acknowledged order sent again: the same order, nothing executed.
          await eachLimited(acked, 8, async ({ o, orderId }) => {
            const r = await post(again, o);
            expect([r.code, r.data?.orderId, r.data?.duplicate]).toEqual([0, orderId, true]);
          });
          // A different order under an acknowledged order's nonce: refused.
          await eachLimited(acked, 8, async ({ o }) => {
            const other = sign(wallets[o.wallet], o.wallet, { ...o.message, price: o.message.side === 'SELL' ? '250.00' : '150.00', size: '2' });
            const r = await post(again, other);
            expect([r.code, r.msg]).toEqual([NONCE_USED, 'message.nonce: already used by another order of this account']);
          });
          expect(await child.state(), 'replays changed neither the journal nor the engine').toEqual(before);

          // The unanswered ones sent now: executed once if absent, answered as before if present.
          await eachLimited(present, 8, async (o) => {
            const r = await post(again, o);
            expect([r.code, r.data?.orderId, r.data?.duplicate]).toEqual([0, orderIdOf(byId.get(`ord:${o.orderHash}`)![0]), true]);
          });
          expect(await child.state()).toEqual(before);
          const placed = new Map<Signed, string>();
          await eachLimited(absent, 8, async (o) => {
            const r = await post(again, o);
            expect([r.code, r.data?.duplicate]).toEqual([0, false]);
            placed.set(o, r.data!.orderId);
          });
          const after = await child.state();
          expect(after.nextSeq, 'each absent order executed once').toBe(before.nextSeq + absent.length);
          rows = await readWholeJournal(db);
          byId = count(rows);
          expect(absent.filter((o) => byId.get(`ord:${o.orderHash}`)?.length !== 1 || orderIdOf(byId.get(`ord:${o.orderHash}`)![0]) !== placed.get(o))).toEqual([]);
          await eachLimited(absent, 8, async (o) => {
            const r = await post(again, o);
            expect([r.code, r.data?.orderId, r.data?.duplicate]).toEqual([0, placed.get(o), true]);
          });
          expect(await child.state()).toEqual(after);
          console.log(
            `order kill run ${run}: killed ${killAfterMs} ms after the first answer; ${acked.length} acknowledged, ${unanswered.length} unanswered ` +
              `(${present.length} journalled, ${absent.length} not: ${claimed.length} of these with the nonce claimed), journal ${rows.length} rows`,
          );
        } finally {
          await db.close();
        }
      }
    } finally {
      if (child && child.proc.exitCode === null && child.proc.signalCode === null) await kill(child);
      await t.cleanup();
    }
  });
});
