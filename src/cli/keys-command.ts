/**
 * `tokex keys create|list|update|revoke`: administration of API keys of both APIs (contract.md §0).
 * The secret is printed once, by `create`, and never again; nothing here logs it. Values are
 * checked by the key model (src/auth/api-key-model.ts), whose errors name the field.
 */
import { Command, Option } from 'commander';
import { loadConfig } from '../config/app-config.ts';
import { API_KINDS, PERP_PERMISSIONS, STOCK_PERMISSIONS, type ApiKeyPermission } from '../auth/api-key-model.ts';
import type { ApiKeyView, UpdateApiKeyInput } from '../auth/api-key-service.ts';
import { openAppDatabase, openKeyService } from '../app/storage-wiring.ts';

function parseExpiry(value: string): number {
  if (/^\d+$/.test(value)) return Number(value);
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new Error(`--expires-at: not a date or ms timestamp: ${value}`);
  return t;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];
}

/** The machine-readable form; a stock key also shows its one permission as `permission`, as before. */
function jsonOf(k: ApiKeyView): Record<string, unknown> {
  return k.api === 'stock' ? { ...k, permission: k.permissions[0] } : { ...k };
}

function printKey(k: ApiKeyView): void {
  const exp = k.expiresAt === null ? 'never' : new Date(k.expiresAt).toISOString();
  const scope = k.api === 'stock' ? `chain ${k.chainId} ${k.product}` : `chain ${k.chainId}`;
  process.stdout.write(
    `${k.apiKey}  ${k.api.padEnd(5)} ${k.permissions.join('+').padEnd(9)} ${k.active ? 'active ' : 'revoked'}  ${scope}  ` +
      `user ${k.userAddress ?? '-'}  ips ${k.ipWhitelist.join(',') || '(none)'}  expires ${exp}  ${k.label}\n`,
  );
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
    .option('--permission <permission>', permissionHelp, collect)
    .option('--ip <address>', 'whitelisted IP (repeatable or comma-separated); with none, a stock key rejects every request and a perp key accepts any address', collect, [])
    .option('--chain-id <id>', 'chain id scope (default CHAIN_ID or 31337)')
    .option('--product <product>', 'stock keys: product scope (default STOCK_PRODUCT or STOCK)')
    .option('--user-address <address>', 'bound wallet address (needed for One Click; a bound key reads that wallet\'s records)')
    .option('--expires-at <time>', 'ISO date or ms timestamp; default never')
    .option('--label <label>', 'free text', '')
    .option('--json', 'machine-readable output')
    .action(async (o) => {
      const cfg = config();
      const api = o.api as (typeof API_KINDS)[number];
      const { key, apiSecret } = await withKeys((svc) =>
        svc.create({
          api,
          permissions: (o.permission as ApiKeyPermission[] | undefined) ?? [api === 'stock' ? 'READ_ONLY' : 'READ'],
          ipWhitelist: o.ip,
          chainId: o.chainId ? Number(o.chainId) : cfg.chainId,
          product: api === 'stock' ? o.product ?? cfg.stockProduct : o.product,
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
      else list.forEach(printKey);
    });

  keys
    .command('update <apiKey>')
    .description('change a key\'s scope, permission, whitelist, expiry or label')
    .option('--permission <permission>', `replace the permissions; ${permissionHelp}`, collect)
    .option('--ip <address>', 'replace the whitelist (repeatable or comma-separated)', collect)
    .option('--chain-id <id>')
    .option('--product <product>')
    .option('--user-address <address>', 'bind a wallet; "none" unbinds')
    .option('--expires-at <time>', 'ISO date or ms timestamp; "never" clears')
    .option('--label <label>')
    .addOption(new Option('--active <bool>').choices(['true', 'false']))
    .option('--json', 'machine-readable output')
    .action(async (apiKey: string, o) => {
      const patch: UpdateApiKeyInput = {};
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

  return keys;
}
