/**
 * Used nonces of signed perpetual orders (migration 0010): each nonce is usable once per account,
 * shared by every API instance through the database. The row keeps the hash of the order that used
 * it, so the same signed order sent again (a client retry after a lost answer) is recognised and
 * answered as the first, while another order with that nonce is refused.
 */
import { PostgresAdapter, sql } from 'kysely';
import { kyselyOf, type DbExecutor } from '../../storage/database.ts';
import { withTransaction } from '../../storage/transaction.ts';
import type { JournalNonceWriter, NonceClaim, NonceClaimInput, OrderNonceClaimer } from './order-nonce-types.ts';

/** Used nonces are kept a day past their order's expiry, then pruned. */
export const NONCE_RETENTION_MS = 24 * 60 * 60_000;

export type { NonceClaim, NonceClaimInput, OrderNonceClaimer } from './order-nonce-types.ts';

interface Waiting {
  rec: NonceClaimInput;
  resolve(claim: NonceClaim): void;
  reject(err: unknown): void;
}

/**
 * Claims answered in batches of one event-loop turn: the first claim of an idle batcher starts a
 * batch on the next turn, so the claims of requests parsed in the same turn share it; later ones
 * wait for the batch in flight. A failed batch fails every claim in it with the same error.
 */
function claimsInTurns(maxBatch: number, decide: (batch: Waiting[]) => Promise<NonceClaim[]>): (rec: NonceClaimInput) => Promise<NonceClaim> {
  let queue: Waiting[] = [];
  let busy = false;
  async function drain(): Promise<void> {
    try {
      while (queue.length > 0) {
        const batch = queue.slice(0, maxBatch);
        queue = queue.slice(batch.length);
        try {
          const answers = await decide(batch);
          batch.forEach((w, i) => w.resolve(answers[i]));
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
      }
    } finally {
      busy = false;
    }
  }
  return (rec) =>
    new Promise<NonceClaim>((resolve, reject) => {
      queue.push({ rec, resolve, reject });
      if (!busy) {
        busy = true;
        setImmediate(() => void drain());
      }
    });
}

/**
 * Group commit of order nonces. A durable insert per order cost a commit (an fsync with SQLite's
 * `synchronous = FULL`) on the request path, blocking the event loop about 3 ms an order on disk;
 * the batches commit without an fsync of their own (below, in `write`).
 * Here the claims that arrive while a batch is being written wait for the next one, and each batch
 * is one transaction: an insert of every new (account, nonce) that skips the taken ones and returns
 * what it inserted, then one read of the order hashes of the rest. No claim is answered before its
 * batch committed, so an answered order's nonce is always on disk; a failed batch fails every claim
 * in it with the same error (none of them was answered, none is recorded).
 *
 * Inside a batch the first claim of a nonce wins, as the first insert would: a later one with the
 * same order hash is `same-order`, another order's is `used`. Expired rows are pruned in a batch at
 * most once every `pruneEveryMs`.
 */
export function createOrderNonceClaimer(db: DbExecutor, opts: { retentionMs: number; pruneEveryMs?: number; maxBatch?: number; now?: () => number }): OrderNonceClaimer {
  const now = opts.now ?? Date.now;
  const pruneEveryMs = opts.pruneEveryMs ?? 60_000;
  // 5 bound values a row: well inside SQLite's and PostgreSQL's limits on parameters.
  const maxBatch = opts.maxBatch ?? 500;
  let lastPrune = -Infinity;

  const postgres = kyselyOf(db).getExecutor().adapter instanceof PostgresAdapter;

  /**
   * PostgreSQL: the batch in one statement, in its own implicit transaction: one round trip where
   * BEGIN, SET LOCAL, INSERT, (SELECT) and COMMIT took four or five, each a socket write and read in
   * the API process and a statement in the server (the claim was 8 % of a scaled-out API process's
   * time an order, issue 40). `set_config(…, true)` is the statement's SET LOCAL: its commit does
   * not wait for the WAL flush, for the reason in `write`. The outer query reads the table as it was
   * before the insert (one snapshot), which is what the taken nonces' order hashes need.
   */
  async function writePostgres(first: Map<string, NonceClaimInput>, prune: boolean, t: number): Promise<{ won: Set<string>; hashes: Map<string, string> }> {
    const k = kyselyOf(db);
    if (prune) await k.deleteFrom('perp_order_nonces').where('expiry', '<', t - opts.retentionMs).execute();
    const values = sql.join(
      [...first.values()].map((r) => sql`(${r.account.toLowerCase()}::text, ${r.nonce}::text, ${r.orderHash.toLowerCase()}::text, ${r.expiry}::bigint, ${r.usedAt}::bigint)`),
    );
    const { rows } = await sql<{ account: string; nonce: string; won: boolean; order_hash: string | null }>`
      with cfg as (select set_config('synchronous_commit', 'off', true) as v),
      input (account, nonce, order_hash, expiry, used_at) as (values ${values}),
      ins as (
        insert into perp_order_nonces (account, nonce, order_hash, expiry, used_at)
        select input.account, input.nonce, input.order_hash, input.expiry, input.used_at from input cross join cfg
        on conflict (account, nonce) do nothing
        returning account, nonce
      )
      select input.account, input.nonce, ins.account is not null as won, taken.order_hash
      from input
      left join ins on ins.account = input.account and ins.nonce = input.nonce
      left join perp_order_nonces taken on taken.account = input.account and taken.nonce = input.nonce`.execute(k);
    const won = new Set<string>();
    const hashes = new Map<string, string>();
    const unseen: Array<{ account: string; nonce: string }> = [];
    for (const r of rows) {
      const key = `${r.account} ${r.nonce}`;
      if (r.won) won.add(key);
      if (r.order_hash !== null) hashes.set(key, r.order_hash);
      else if (!r.won) unseen.push(r);
    }
    // Lost to a claim another process committed while this statement waited on its row: the
    // statement's snapshot predates it, so its hash is read now (the same order sent to two API
    // processes at once is then `same-order` on both, as it was with the separate SELECT).
    if (unseen.length > 0) {
      const late = await k
        .selectFrom('perp_order_nonces')
        .select(['account', 'nonce', 'order_hash'])
        .where((eb) => eb.or(unseen.map((r) => eb.and([eb('account', '=', r.account), eb('nonce', '=', r.nonce)]))))
        .execute();
      for (const r of late) hashes.set(`${r.account} ${r.nonce}`, r.order_hash);
    }
    return { won, hashes };
  }

  async function write(batch: Waiting[]): Promise<NonceClaim[]> {
    const keyOf = (r: NonceClaimInput) => `${r.account.toLowerCase()} ${r.nonce}`;
    const first = new Map<string, NonceClaimInput>();
    for (const { rec } of batch) if (!first.has(keyOf(rec))) first.set(keyOf(rec), rec);
    const t = now();
    const prune = t - lastPrune >= pruneEveryMs;
    // Not durable (no fsync of its own): a claim only matters once its order is answered, and an
    // order is answered after its journal row's durable commit, which syncs the database's log up to
    // itself, this earlier claim included (transaction.ts). A machine crash can lose the claims of
    // orders nobody was answered, whose commands the journal lost with them. Half the commits' cost.
    const answer = (won: Set<string>, hashes: Map<string, string>): NonceClaim[] => {
      for (const [key, r] of first) if (won.has(key)) hashes.set(key, r.orderHash.toLowerCase());
      if (prune) lastPrune = t;
      return batch.map(({ rec }) => {
        const key = keyOf(rec);
        if (won.has(key) && first.get(key) === rec) return 'claimed';
        return hashes.get(key) === rec.orderHash.toLowerCase() ? 'same-order' : 'used';
      });
    };
    if (postgres) {
      const { won, hashes } = await writePostgres(first, prune, t);
      return answer(won, hashes);
    }
    return withTransaction(db, async (tx) => {
      const k = kyselyOf(tx);
      if (prune) await k.deleteFrom('perp_order_nonces').where('expiry', '<', t - opts.retentionMs).execute();
      const inserted = await k
        .insertInto('perp_order_nonces')
        .values([...first.values()].map((r) => ({ account: r.account.toLowerCase(), nonce: r.nonce, order_hash: r.orderHash.toLowerCase(), expiry: r.expiry, used_at: r.usedAt })))
        .onConflict((oc) => oc.columns(['account', 'nonce']).doNothing())
        .returning(['account', 'nonce'])
        .execute();
      const won = new Set(inserted.map((r) => `${r.account} ${r.nonce}`));
      const taken = [...first.values()].filter((r) => !won.has(keyOf(r)));
      const hashes = new Map<string, string>();
      if (taken.length > 0) {
        const rows = await k
          .selectFrom('perp_order_nonces')
          .select(['account', 'nonce', 'order_hash'])
          .where((eb) => eb.or(taken.map((r) => eb.and([eb('account', '=', r.account.toLowerCase()), eb('nonce', '=', r.nonce)]))))
          .execute();
        for (const r of rows) hashes.set(`${r.account} ${r.nonce}`, r.order_hash);
      }
      return answer(won, hashes);
    }, { durable: false });
  }

  return { claim: claimsInTurns(maxBatch, write) };
}

/**
 * Order nonces claimed with the journal (the engine in this process, no other process claiming):
 * a claim is decided at once against the claims not yet written and one read of the table per turn,
 * and the claimed rows are written by the sequencer in its journal commit (`take`, then `written`
 * or `restore`). That commit is durable and comes before any answer of the orders it carries, so
 * an answered order's nonce is on disk with its journal row and a crash loses neither alone; the
 * separate commit the claimer pays for every turn (a third of a single order's SQLite time, issue
 * 40) goes away.
 *
 * Only where every claim goes through this one ledger: a perp API in another process claims in its
 * own commits (`createOrderNonceClaimer`), which this ledger would not see before writing.
 */
export interface JournalNonceLedger extends OrderNonceClaimer, JournalNonceWriter {
  /** The claims not yet written, for the journal commit about to start. */
  take(): NonceClaimInput[];
  /** The commit holding `rows` is durable. */
  written(rows: readonly NonceClaimInput[]): void;
  /** The commit holding `rows` failed: they go with the next one. */
  restore(rows: readonly NonceClaimInput[]): void;
}

export function createJournalNonceLedger(db: DbExecutor, opts: { retentionMs: number; pruneEveryMs?: number; maxBatch?: number; now?: () => number }): JournalNonceLedger {
  const now = opts.now ?? Date.now;
  const pruneEveryMs = opts.pruneEveryMs ?? 60_000;
  const maxBatch = opts.maxBatch ?? 500;
  const keyOf = (account: string, nonce: string) => `${account.toLowerCase()} ${nonce}`;
  /** Claims decided here: key → order hash, and the write generation that made them durable (0: not yet). */
  const known = new Map<string, { rec: NonceClaimInput; orderHash: string; writtenAt: number }>();
  let unwritten: NonceClaimInput[] = [];
  let generation = 0;
  let lastPrune = -Infinity;
  // On SQLite each asked nonce is one prepared point read on the primary key, run synchronously: a
  // single order's turn asks one, and the Kysely query (an OR of the keys, built and compiled each
  // turn) cost about ten times the read itself (docs/performance.md, "The nonce read").
  // Prepared at the first read, once the table is sure to exist.
  type StoredHash = (account: string, nonce: string) => { order_hash: string } | undefined;
  const prepareRead = 'prepareRead' in db ? db.prepareRead : undefined;
  let storedHash: StoredHash | undefined;
  const pointRead = prepareRead
    ? (account: string, nonce: string) => (storedHash ??= prepareRead<{ order_hash: string }>('select order_hash from perp_order_nonces where account = ? and nonce = ?'))(account, nonce)
    : undefined;

  async function decide(batch: Waiting[]): Promise<NonceClaim[]> {
    // Claims written before this read began are in the table the read sees: forgotten here. The ones
    // written while it runs may be missing from its answer, so they stay until the next read.
    const seenFrom = generation;
    for (const [key, k] of known) if (k.writtenAt !== 0 && k.writtenAt <= seenFrom) known.delete(key);
    const t = now();
    const ask = new Map<string, NonceClaimInput>();
    for (const { rec } of batch) {
      const key = keyOf(rec.account, rec.nonce);
      if (!known.has(key) && !ask.has(key)) ask.set(key, rec);
    }
    const stored = new Map<string, string>();
    if (ask.size > 0 || t - lastPrune >= pruneEveryMs) {
      const k = kyselyOf(db);
      if (t - lastPrune >= pruneEveryMs) {
        await k.deleteFrom('perp_order_nonces').where('expiry', '<', t - opts.retentionMs).execute();
        lastPrune = t;
      }
      if (ask.size > 0 && pointRead) {
        for (const [key, r] of ask) {
          const row = pointRead(r.account.toLowerCase(), r.nonce);
          if (row !== undefined) stored.set(key, row.order_hash);
        }
      } else if (ask.size > 0) {
        const rows = await k
          .selectFrom('perp_order_nonces')
          .select(['account', 'nonce', 'order_hash'])
          .where((eb) => eb.or([...ask.values()].map((r) => eb.and([eb('account', '=', r.account.toLowerCase()), eb('nonce', '=', r.nonce)]))))
          .execute();
        for (const r of rows) stored.set(`${r.account} ${r.nonce}`, r.order_hash);
      }
    }
    // In arrival order, synchronously: the first claim of a free nonce wins it.
    return batch.map(({ rec }) => {
      const key = keyOf(rec.account, rec.nonce);
      const hash = rec.orderHash.toLowerCase();
      const taken = known.get(key)?.orderHash ?? stored.get(key);
      if (taken !== undefined) return taken === hash ? 'same-order' : 'used';
      const row = { ...rec, account: rec.account.toLowerCase(), orderHash: hash };
      known.set(key, { rec: row, orderHash: hash, writtenAt: 0 });
      unwritten.push(row);
      return 'claimed';
    });
  }

  return {
    claim: claimsInTurns(maxBatch, decide),
    take() {
      const rows = unwritten;
      unwritten = [];
      return rows;
    },
    written(rows) {
      generation++;
      for (const r of rows) {
        const k = known.get(keyOf(r.account, r.nonce));
        if (k && k.rec === r) k.writtenAt = generation;
      }
    },
    restore(rows) {
      unwritten = [...rows, ...unwritten];
    },
  };
}
