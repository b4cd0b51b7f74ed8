/**
 * `tokex keys create|list|update|revoke|rotate-master`: administration of API keys of both APIs
 * (contract.md §0) and of the master key encrypting their secrets (docs/api-keys-secrets.md).
 * The secret is printed once, by `create`, and never again; nothing here logs it or a master key.
 * Values are checked by the key model (src/auth/api-key-model.ts), whose errors name the field.
 */
import fs from 'node:fs';
import { Command, Option } from 'commander';
import { loadConfig, type AppConfig } from '../config/app-config.ts';
import { formatStockScope } from '@tokex/contract';
import { API_KINDS, parseScope, PERP_PERMISSIONS, STOCK_PERMISSIONS, type ApiKeyPermission, type StockScope } from '../auth/api-key-model.ts';
import { reencryptApiSecrets, type ApiKeyView, type ReencryptProgress, type ReencryptResult, type UpdateApiKeyInput } from '../auth/api-key-service.ts';
import {
  createSecretBox,
  loadMasterKeyring,
  masterKeyId,
  parseMasterKey,
  promoteNextMasterKey,
  stageNextMasterKey,
  unstageNextMasterKey,
} from '../auth/secret-box.ts';
import { openAppDatabase, openKeyService } from '../app/storage-wiring.ts';
import type { Db } from '../storage/database.ts';
import { AppError } from '../errors/app-error.ts';
import { fields, table } from './cli-output.ts';

export interface RotateMasterResult extends ReencryptResult {
  oldKeyId: string;
  newKeyId: string;
  /** MASTER_KEY comes from the environment: the operator switches it (nothing in DATA_DIR changed). */
  envManaged: boolean;
  /** DATA_DIR/master.key now holds the new key (the old one is in master.key.previous). */
  promoted: boolean;
}

/** Reads a 32-byte key (hex or base64) from a file; errors name the file, never its content. */
export function readMasterKeyFile(file: string): Buffer {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (cause) {
    throw new AppError('VALIDATION', `--new-key-file: cannot read ${file}`, { cause });
  }
  return parseMasterKey(text, `--new-key-file ${file}`);
}

/**
 * `tokex keys rotate-master`: every API secret re-encrypted under `newKey`, restartable at any point.
 * With the key in DATA_DIR: (a) stage it as master.key.next, which every process of the data
 * directory then decrypts with; (b)+(c) re-encrypt every row in batches under it; (d) master.key
 * joins master.key.previous and master.key.next becomes master.key. With MASTER_KEY from the
 * environment only (b)+(c) happen here and the operator switches the variables.
 */
export async function rotateMasterKey(opts: {
  config: AppConfig;
  db: Db;
  newKey: Buffer;
  batchSize?: number;
  afterBatch?: ReencryptProgress;
}): Promise<RotateMasterResult> {
  const { config, newKey } = opts;
  const src = { masterKey: config.masterKey, masterKeyPrevious: config.masterKeyPrevious, dataDir: config.dataDir };
  const envManaged = config.masterKey !== undefined;
  const before = loadMasterKeyring(src);
  if (!envManaged) {
    if (newKey.equals(before.current)) unstageNextMasterKey(config.dataDir);
    else stageNextMasterKey(config.dataDir, newKey);
  }
  // Every key known (the old current, a staged one, the previous ones) decrypts; the new one encrypts.
  const ring = loadMasterKeyring(src);
  const box = createSecretBox({ current: newKey, previous: [ring.current, ...(ring.previous ?? [])] });
  const res = await reencryptApiSecrets(opts.db, box, { batchSize: opts.batchSize, afterBatch: opts.afterBatch });
  const promoted = !envManaged && promoteNextMasterKey(config.dataDir);
  return { ...res, oldKeyId: masterKeyId(before.current), newKeyId: masterKeyId(newKey), envManaged, promoted };
}

function parseExpiry(value: string): number {
  if (/^\d+$/.test(value)) return Number(value);
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new Error(`--expires-at: not a date or ms timestamp: ${value}`);
  return t;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];
}

/**
 * One `--scope 8453:Anchored:WRITABLE` (repeatable, or comma-separated like `--ip`), parsed here so
 * that a string that names no scope is refused before the database is opened, naming the option.
 */
const scopeOption = (option: string) => (value: string, previous: StockScope[] = []): StockScope[] => [
  ...previous,
  ...value.split(',').map((s) => s.trim()).filter(Boolean).map((s) => parseScope(s, option)),
];

/**
 * The machine-readable form; a stock key also shows its first scope's access as `permission`, as
 * before scopes, beside `scopes`.
 */
function jsonOf(k: ApiKeyView): Record<string, unknown> {
  return k.api === 'stock' ? { ...k, permission: k.permissions[0] } : { ...k };
}

/** One row of `keys list`'s table (never the secret). */
function printKey(k: ApiKeyView): void {
  process.stdout.write(`${fields(keyRow(k))}\n`);
}

function keyRow(k: ApiKeyView): Record<string, unknown> {
  return {
    apiKey: k.apiKey,
    api: k.api,
    permissions: k.permissions.join('+'),
    state: k.active ? 'active' : 'revoked',
    // A stock key's rights are its scopes (its `permissions` only the first one's access).
    scope: k.api === 'stock' ? k.scopes.map(formatStockScope).join(',') : `chain ${k.chainId}`,
    user: k.userAddress ?? '-',
    ips: k.ipWhitelist.join(',') || '(none)',
    expires: k.expiresAt === null ? 'never' : new Date(k.expiresAt).toISOString(),
    label: k.label,
  };
}

async function withKeys<T>(fn: (keys: ReturnType<typeof openKeyService>) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const db = await openAppDatabase(config);
  try {
    return await fn(openKeyService(config, db));
  } finally {
    await db.close();
  }
}

export function keysCommand(): Command {
  const config = () => loadConfig();
  const keys = new Command('keys').description('manage API keys of the stock and perp APIs');
  const permissionHelp = `stock: ${STOCK_PERMISSIONS.join(' or ')} (default READ_ONLY); perp: any of ${PERP_PERMISSIONS.join(', ')}, repeatable (default READ)`;

  keys
    .command('create')
    .description('create a key; the secret is printed once')
    .addOption(new Option('--api <api>', 'the API the key belongs to').choices([...API_KINDS]).default('stock'))
    .option('--scope <chainId:product:ACCESS>', 'stock keys: a scope, e.g. 8453:Anchored:WRITABLE (repeatable or comma-separated; product case-sensitive, ACCESS READ_ONLY or WRITABLE); instead of --permission, --chain-id and --product', scopeOption('--scope'))
    .option('--permission <permission>', permissionHelp, collect)
    .option('--ip <address>', 'whitelisted IP (repeatable or comma-separated); with none, a stock key rejects every request and a perp key accepts any address', collect, [])
    .option('--chain-id <id>', 'chain id (default CHAIN_ID or 31337); for a stock key without --scope, its one scope\'s chain')
    .option('--product <product>', 'stock keys without --scope: the one scope\'s product (default STOCK_PRODUCT or STOCK)')
    .option('--user-address <address>', 'bound wallet address (needed for One Click; a bound key reads that wallet\'s records)')
    .option('--expires-at <time>', 'ISO date or ms timestamp; default never')
    .option('--label <label>', 'free text', '')
    .option('--json', 'machine-readable output')
    .action(async (o) => {
      const cfg = config();
      const api = o.api as (typeof API_KINDS)[number];
      const scopes = o.scope as StockScope[] | undefined;
      // With --scope the key's rights are its scopes; --permission, --chain-id or --product beside
      // them are passed on, for the key service to refuse the mix by name.
      const { key, apiSecret } = await withKeys((svc) =>
        svc.create({
          api,
          scopes,
          permissions: (o.permission as ApiKeyPermission[] | undefined) ?? (scopes ? undefined : [api === 'stock' ? 'READ_ONLY' : 'READ']),
          ipWhitelist: o.ip,
          chainId: o.chainId ? Number(o.chainId) : scopes ? undefined : cfg.chainId,
          product: api === 'stock' ? o.product ?? (scopes ? undefined : cfg.stockProduct) : o.product,
          userAddress: o.userAddress ?? null,
          expiresAt: o.expiresAt ? parseExpiry(o.expiresAt) : null,
          label: o.label,
        }),
      );
      if (o.json) process.stdout.write(JSON.stringify({ ...jsonOf(key), apiSecret }) + '\n');
      else {
        printKey(key);
        process.stdout.write(`apiSecret: ${apiSecret}\n(store it now: it is shown only this once)\n`);
      }
    });

  keys
    .command('list')
    .description('list keys (never their secrets)')
    .addOption(new Option('--api <api>', 'only the keys of one API').choices([...API_KINDS]))
    .option('--json', 'machine-readable output')
    .action(async (o) => {
      const list = await withKeys((svc) => svc.list({ api: o.api }));
      if (o.json) process.stdout.write(JSON.stringify(list.map(jsonOf)) + '\n');
      else process.stdout.write(`${table(list.map(keyRow))}\n`);
    });

  keys
    .command('show <apiKey>')
    .description('one key (never its secret), with each of its scopes')
    .option('--json', 'machine-readable output')
    .action(async (apiKey: string, o) => {
      const key = await withKeys((svc) => svc.get(apiKey));
      if (!key) throw new AppError('NOT_FOUND', `apiKey: no key ${apiKey}`);
      if (o.json) process.stdout.write(JSON.stringify(jsonOf(key)) + '\n');
      else printKey(key);
    });

  keys
    .command('update <apiKey>')
    .description('change a key\'s scopes, permission, whitelist, expiry or label')
    .option('--add-scope <chainId:product:ACCESS>', 'stock keys: add a scope (repeatable); one held for the same chain and product gets this access', scopeOption('--add-scope'))
    .option('--remove-scope <chainId:product:ACCESS>', 'stock keys: remove a scope the key holds (repeatable); the last one cannot be removed', scopeOption('--remove-scope'))
    .option('--permission <permission>', `replace the permissions (a stock key of one scope: that scope's access); ${permissionHelp}`, collect)
    .option('--ip <address>', 'replace the whitelist (repeatable or comma-separated)', collect)
    .option('--chain-id <id>', 'perp keys, and a stock key of one scope: that scope\'s chain')
    .option('--product <product>', 'a stock key of one scope: that scope\'s product')
    .option('--user-address <address>', 'bind a wallet; "none" unbinds')
    .option('--expires-at <time>', 'ISO date or ms timestamp; "never" clears')
    .option('--label <label>')
    .addOption(new Option('--active <bool>').choices(['true', 'false']))
    .option('--json', 'machine-readable output')
    .action(async (apiKey: string, o) => {
      const patch: UpdateApiKeyInput = {};
      if (o.addScope) patch.addScopes = o.addScope as StockScope[];
      if (o.removeScope) patch.removeScopes = o.removeScope as StockScope[];
      if (o.permission) patch.permissions = o.permission as ApiKeyPermission[];
      if (o.ip) patch.ipWhitelist = o.ip;
      if (o.chainId) patch.chainId = Number(o.chainId);
      if (o.product) patch.product = o.product;
      if (o.userAddress) patch.userAddress = o.userAddress === 'none' ? null : o.userAddress;
      if (o.expiresAt) patch.expiresAt = o.expiresAt === 'never' ? null : parseExpiry(o.expiresAt);
      if (o.label !== undefined) patch.label = o.label;
      if (o.active) patch.active = o.active === 'true';
      const key = await withKeys((svc) => svc.update(apiKey, patch));
      if (o.json) process.stdout.write(JSON.stringify(jsonOf(key)) + '\n');
      else printKey(key);
    });

  keys
    .command('revoke <apiKey>')
    .description('deactivate a key; requests with it fail from then on')
    .option('--json', 'machine-readable output')
    .action(async (apiKey: string, o) => {
      await withKeys((svc) => svc.revoke(apiKey));
      if (o.json) process.stdout.write(JSON.stringify({ apiKey, active: false }) + '\n');
      else process.stdout.write(`revoked ${apiKey}\n`);
    });

  keys
    .command('rotate-master')
    .description('re-encrypt every API secret under a new master key (restartable; the APIs keep serving)')
    .requiredOption('--new-key-file <file>', 'file holding the new 32-byte key as hex or base64 (e.g. `openssl rand -hex 32`)')
    .option('--batch-size <n>', 'rows per transaction', '100')
    .option('--json', 'machine-readable output')
    .action(async (o) => {
      const batchSize = Number(o.batchSize);
      if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new AppError('VALIDATION', '--batch-size: must be a positive integer');
      const newKey = readMasterKeyFile(o.newKeyFile);
      const config = loadConfig();
      const db = await openAppDatabase(config);
      let res: RotateMasterResult;
      try {
        res = await rotateMasterKey({ config, db, newKey, batchSize });
      } finally {
        await db.close();
      }
      if (res.failed.length > 0) {
        process.stderr.write(
          `warning: ${res.failed.length} key(s) whose stored secret no master key decrypts were left unchanged (they were refused already): ${res.failed.join(', ')}\n`,
        );
      }
      if (o.json) {
        process.stdout.write(JSON.stringify(res) + '\n');
        return;
      }
      process.stdout.write(`re-encrypted ${res.rewritten} secret(s) under master key ${res.newKeyId} (${res.current} already under it, ${res.batches} batch(es))\n`);
      if (res.promoted) process.stdout.write(`DATA_DIR/master.key is now key ${res.newKeyId}; key ${res.oldKeyId} moved to master.key.previous (keep it until no backup needs it)\n`);
      else if (res.envManaged && res.oldKeyId !== res.newKeyId) {
        process.stdout.write(
          `MASTER_KEY comes from the environment, so nothing in DATA_DIR changed. On every instance now set:\n` +
            `  MASTER_KEY=<the key in ${o.newKeyFile}>   (id ${res.newKeyId})\n` +
            `  MASTER_KEY_PREVIOUS=<the current MASTER_KEY>${config.masterKeyPrevious.length ? ',<the current MASTER_KEY_PREVIOUS>' : ''}   (id ${res.oldKeyId})\n` +
            `and restart them. Until then an instance decrypts the new secrets only if the new key is in its MASTER_KEY_PREVIOUS.\n`,
        );
      }
    });

  return keys;
}
