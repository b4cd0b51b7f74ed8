/**
 * The process the signed-order kill test (order-kill-replay.test.ts) kills: the perp API over HTTP
 * with the real engine behind it (sequencer journalling to the database, projector writing the
 * history), as the harness and the bench serve it. The load comes from the parent, over HTTP.
 *
 * On the first start (KR_FIRST=1) it funds the wallets and creates one perp key for each (printed as
 * `key <address> <apiKey> <apiSecret>`); every start sets the mark. The deposits and the mark carry
 * fixed command ids, so a restart's are answered from the journal and add no row. It prints
 * `ready <baseUrl>` once listening, and answers each `state` line on stdin with
 * `state <nextJournalSeq> <stateHash>` once every command applied so far is durable.
 *
 * Environment: KR_SQLITE_PATH, or KR_PG_URL and KR_PG_SCHEMA; KR_MASTER (hex key of the secret box
 * the keys' secrets are sealed with, the same on every start); KR_WALLETS (comma-separated
 * addresses); KR_FIRST; KR_NONCES, KR_JOURNAL (below).
 */
import { createInterface } from 'node:readline';
import { createApiKeyService } from '../../src/auth/api-key-service.ts';
import { createMemoryNonceStore } from '../../src/auth/nonce-store.ts';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { buildPerpApi } from '../../src/perp/perp-api.ts';
import { indexedBlockInfo } from '../../src/perp/perp-venue.ts';
import { createPerpProjector } from '../../src/perp/projection/perp-projector.ts';
import { createInProcessGateway } from '../../src/perp/sequencer/engine-gateway.ts';
import { EngineSequencer } from '../../src/perp/sequencer/engine-sequencer.ts';
import { workerJournalWriter } from '../../src/perp/sequencer/journal-writer.ts';
import { NONCE_RETENTION_MS, createJournalNonceLedger } from '../../src/perp/store/order-nonce-store.ts';
import type { EngineCommand } from '../../src/perp/engine/engine-types.ts';
import { openDatabase } from '../../src/storage/database.ts';

export const KILL_CHAIN_ID = 31337;
export const KILL_VAULT = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
export const KILL_SYMBOL = 'AAPL-USD';
/** The mark, in ticks of 0.01: 200. */
export const KILL_MARK_TICKS = 20_000;

const env = process.env;
if (env.KR_MASTER !== undefined) {
  // Never outlive a parent that failed before killing us.
  setTimeout(() => process.exit(3), 120_000).unref();
  process.stdout.on('error', () => process.exit(4));
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const db = await openDatabase(env.KR_PG_URL ? { url: env.KR_PG_URL, schema: env.KR_PG_SCHEMA } : { sqlitePath: env.KR_SQLITE_PATH });
  const logger = createLogger({ level: 'silent' });
  // KR_NONCES=journal: the nonces claimed in the journal's commits, as the perp-engine role does with
  // its API in process; otherwise by the API's own claimer, as a perp API in another process does.
  const nonceLedger = env.KR_NONCES === 'journal' ? createJournalNonceLedger(db, { retentionMs: NONCE_RETENTION_MS }) : undefined;
  // KR_JOURNAL=worker: the group commits on the journal's writer thread, as the perp-engine role runs them on a SQLite file.
  const journalWriter = env.KR_JOURNAL === 'worker' ? workerJournalWriter({ database: { sqlitePath: env.KR_SQLITE_PATH } }) : undefined;
  const sequencer = new EngineSequencer({ db, snapshotEvery: 200, logger, ...(nonceLedger ? { nonceLedger } : {}), ...(journalWriter ? { journalWriter } : {}) });
  await sequencer.start();
  const gateway = createInProcessGateway(sequencer);
  const projector = createPerpProjector({ db, gateway, feeAccount: sequencer.engine.feeAccountAddress, logger, retryMs: 50 });
  await projector.start();
  const ok = async (cmd: EngineCommand) => {
    const r = await gateway.submit(cmd);
    if (!r.ok) throw new Error(`kill child ${cmd.kind}: ${r.code} ${r.message}`);
  };
  await ok({ kind: 'setMarkPrice', id: 'mark:kill-replay', ts: Date.now(), symbol: KILL_SYMBOL, markPriceTicks: KILL_MARK_TICKS, indexPriceTicks: KILL_MARK_TICKS });
  const keys = createApiKeyService({ db, secretBox: createSecretBox(Buffer.from(env.KR_MASTER, 'hex')), cacheTtlMs: 60_000 });
  const wallets = (env.KR_WALLETS ?? '').split(',').filter(Boolean);
  for (const address of wallets) {
    // 10 million USD each (micro-USD): no order of the test is refused for margin.
    await ok({ kind: 'deposit', id: `dep:kill-replay-${address.toLowerCase()}`, ts: Date.now(), account: address.toLowerCase(), amount: 10_000_000n * 1_000_000n });
    if (env.KR_FIRST === '1') {
      const { key, apiSecret } = await keys.create({ api: 'perp', permissions: ['READ', 'TRADE'], ipWhitelist: [], chainId: KILL_CHAIN_ID, userAddress: address, label: 'kill test' });
      out(`key ${address} ${key.apiKey} ${apiSecret}`);
    }
  }
  const app = await buildPerpApi({
    chainId: KILL_CHAIN_ID, db, keys, nonces: createMemoryNonceStore(), rateLimit: { limit: 1_000_000_000 }, logger, bodyLimitBytes: 65_536,
    marginVault: KILL_VAULT, venue: { gateway, engine: () => sequencer.engine, blockInfo: () => indexedBlockInfo(db), ...(nonceLedger ? { nonces: nonceLedger } : {}) },
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  out(`ready ${url}`);
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line.trim() !== 'state') return;
    void sequencer.readBarrier().then(() => out(`state ${sequencer.nextSeq} ${sequencer.engine.stateHash()}`));
  });
}
