/** Opens the storage and key services the same way in every role and in the CLI. */
import path from 'node:path';
import type { AppConfig } from '../config/app-config.ts';
import { createApiKeyService, type ApiKeyService, type KeyServiceLog } from '../auth/api-key-service.ts';
import { openMasterSecretBox, type SecretBox } from '../auth/secret-box.ts';
import { createLogger, type Logger } from '../lib/logger.ts';
import { moveHistoryToOwnFile } from '../perp/store/perp-history-file.ts';
import { StorageUnavailableError } from '../errors/app-error.ts';
import { checkDatabaseReadable, isInMemorySqlite, openDatabase, type Db, type OpenDatabaseOptions } from '../storage/database.ts';

export function sqlitePathOf(config: AppConfig): string {
  return path.join(config.dataDir, 'tokex.sqlite');
}

function databaseOptions(config: AppConfig): OpenDatabaseOptions {
  return { url: config.databaseUrl, schema: config.databaseUrl ? config.databaseSchema : undefined, sqlitePath: sqlitePathOf(config) };
}

export async function openAppDatabase(config: AppConfig): Promise<Db> {
  return openDatabase(databaseOptions(config));
}

/** The perpetual venue's history beside the main SQLite file (src/perp/store/perp-history-file.ts). */
export function historyPathOf(config: AppConfig): string {
  return path.join(config.dataDir, 'perp-history.sqlite');
}

/**
 * The database of the perpetual venue's history (the projection's tables and cursor): on SQLite a
 * file of its own, `perp-history.sqlite`, so that the projection's writes never hold the write lock
 * the journal's commits need (docs/perp-sequencer.md "The history's own file"), with an earlier
 * release's history moved there on its first open; on PostgreSQL `db` itself (its writers do not
 * share one lock). `db` is the main database, open.
 */
export async function openHistoryDatabase(config: AppConfig, db: Db, logger?: Pick<Logger, 'info'>): Promise<Db> {
  if (config.databaseUrl || db.dialect !== 'sqlite' || isInMemorySqlite(db.location)) return db;
  const historyPath = historyPathOf(config);
  const history = await openDatabase({ sqlitePath: historyPath });
  try {
    await moveHistoryToOwnFile({ main: db, history, mainPath: sqlitePathOf(config), historyPath, logger });
  } catch (err) {
    await history.close();
    throw err;
  }
  return history;
}

/**
 * Refuses (NewerDatabaseError) a database a newer release wrote, before a start touches anything
 * (docs/upgrades.md); openAppDatabase checks again before it migrates. A database that does not
 * answer is left to openAppDatabase, which reports it as it always has.
 */
export async function checkAppDatabase(config: AppConfig): Promise<void> {
  try {
    await checkDatabaseReadable(databaseOptions(config));
  } catch (err) {
    if (!(err instanceof StorageUnavailableError)) throw err;
  }
}

/**
 * The master keyring of this deployment (MASTER_KEY or DATA_DIR/master.key, plus the decrypt-only
 * keys), following DATA_DIR's key files during a rotation (docs/api-keys-secrets.md).
 */
export function openSecretBox(config: AppConfig): SecretBox {
  return openMasterSecretBox({ masterKey: config.masterKey, masterKeyPrevious: config.masterKeyPrevious, dataDir: config.dataDir });
}

/** `log` receives a refused stored secret's warning; by default a logger of its own at LOG_LEVEL. */
export function openKeyService(config: AppConfig, db: Db, log?: KeyServiceLog): ApiKeyService {
  // Made on first warning only: a CLI run that never warns opens no log destination.
  let own: KeyServiceLog | undefined;
  const fallback: KeyServiceLog = { warn: (obj, msg) => (own ??= createLogger({ name: 'api-keys', level: config.logLevel })).warn(obj, msg) };
  return createApiKeyService({
    db,
    secretBox: openSecretBox(config),
    cacheTtlMs: config.apiKeyCacheTtlMs,
    log: log ?? fallback,
  });
}
