/** Opens the storage and key services the same way in every role and in the CLI. */
import path from 'node:path';
import type { AppConfig } from '../config/app-config.ts';
import { createApiKeyService, type ApiKeyService, type KeyServiceLog } from '../auth/api-key-service.ts';
import { openMasterSecretBox, type SecretBox } from '../auth/secret-box.ts';
import { createLogger } from '../lib/logger.ts';
import { openDatabase, type Db } from '../storage/database.ts';

export function sqlitePathOf(config: AppConfig): string {
  return path.join(config.dataDir, 'tokex.sqlite');
}

export async function openAppDatabase(config: AppConfig): Promise<Db> {
  return openDatabase({ url: config.databaseUrl, schema: config.databaseUrl ? config.databaseSchema : undefined, sqlitePath: sqlitePathOf(config) });
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
