/** Opens the storage and key services the same way in every role and in the CLI. */
import path from 'node:path';
import type { AppConfig } from '../config/app-config.ts';
import { createApiKeyService, type ApiKeyService } from '../auth/api-key-service.ts';
import { createSecretBox, loadMasterKey } from '../auth/secret-box.ts';
import { openDatabase, type Db } from '../storage/database.ts';

export function sqlitePathOf(config: AppConfig): string {
  return path.join(config.dataDir, 'tokex.sqlite');
}

export async function openAppDatabase(config: AppConfig): Promise<Db> {
  return openDatabase({ url: config.databaseUrl, schema: config.databaseUrl ? config.databaseSchema : undefined, sqlitePath: sqlitePathOf(config) });
}

export function openKeyService(config: AppConfig, db: Db): ApiKeyService {
  const secretBox = createSecretBox(loadMasterKey({ masterKey: config.masterKey, dataDir: config.dataDir }));
  return createApiKeyService({ db, secretBox, cacheTtlMs: config.apiKeyCacheTtlMs });
}
