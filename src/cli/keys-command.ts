/**
 * `tokex keys create|list|update|revoke`: administration of stock API keys (contract.md §0).
 * The secret is printed once, by `create`, and never again; nothing here logs it.
 */
import { Command, Option } from 'commander';
import { loadConfig } from '../config/app-config.ts';
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

function printKey(k: ApiKeyView): void {
  const exp = k.expiresAt === null ? 'never' : new Date(k.expiresAt).toISOString();
  process.stdout.write(
    `${k.apiKey}  ${k.permission.padEnd(9)} ${k.active ? 'active ' : 'revoked'}  chain ${k.chainId} ${k.product}  ` +
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
  const keys = new Command('keys').description('manage stock API keys');

  keys
    .command('create')
    .description('create a key; the secret is printed once')
    .addOption(new Option('--permission <permission>', 'READ_ONLY or WRITABLE').choices(['READ_ONLY', 'WRITABLE']).default('READ_ONLY'))
    .option('--ip <address>', 'whitelisted IP (repeatable or comma-separated); an empty whitelist rejects every request', collect, [])
    .option('--chain-id <id>', 'chain id scope (default CHAIN_ID or 31337)')
    .option('--product <product>', 'product scope (default STOCK_PRODUCT or STOCK)')
    .option('--user-address <address>', 'bound wallet address (needed for One Click)')
    .option('--expires-at <time>', 'ISO date or ms timestamp; default never')
    .option('--label <label>', 'free text', '')
    .option('--json', 'machine-readable output')
    .action(async (o) => {
      const cfg = config();
      const { key, apiSecret } = await withKeys((svc) =>
        svc.create({
          permission: o.permission,
          ipWhitelist: o.ip,
          chainId: o.chainId ? Number(o.chainId) : cfg.chainId,
          product: o.product ?? cfg.stockProduct,
          userAddress: o.userAddress ?? null,
          expiresAt: o.expiresAt ? parseExpiry(o.expiresAt) : null,
          label: o.label,
        }),
      );
      if (o.json) process.stdout.write(JSON.stringify({ ...key, apiSecret }) + '\n');
      else {
        printKey(key);
        process.stdout.write(`apiSecret: ${apiSecret}\n(store it now: it is shown only this once)\n`);
      }
    });

  keys
    .command('list')
    .description('list keys (never their secrets)')
    .option('--json', 'machine-readable output')
    .action(async (o) => {
      const list = await withKeys((svc) => svc.list());
      if (o.json) process.stdout.write(JSON.stringify(list) + '\n');
      else list.forEach(printKey);
    });

  keys
    .command('update <apiKey>')
    .description('change a key\'s scope, permission, whitelist, expiry or label')
    .addOption(new Option('--permission <permission>').choices(['READ_ONLY', 'WRITABLE']))
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
      if (o.permission) patch.permission = o.permission;
      if (o.ip) patch.ipWhitelist = o.ip;
      if (o.chainId) patch.chainId = Number(o.chainId);
      if (o.product) patch.product = o.product;
      if (o.userAddress) patch.userAddress = o.userAddress === 'none' ? null : o.userAddress;
      if (o.expiresAt) patch.expiresAt = o.expiresAt === 'never' ? null : parseExpiry(o.expiresAt);
      if (o.label !== undefined) patch.label = o.label;
      if (o.active) patch.active = o.active === 'true';
      const key = await withKeys((svc) => svc.update(apiKey, patch));
      if (o.json) process.stdout.write(JSON.stringify(key) + '\n');
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
