/**
 * Perp API keys a wallet creates and manages (contract.md §B, docs/perp-api.md "API keys").
 *
 * Creation is authorised by the wallet, not by a key: `prepare` answers complete EIP-712 typed data
 * (domain `TokexPerp` / `1` / the chain / the margin vault; `CreateApiKey(address wallet,string
 * label,string permissions,uint64 nonce,uint64 expiry)` with a fresh random nonce and an expiry a
 * few minutes ahead); `create` takes the message back with the wallet's signature, rebuilds domain
 * and types, and checks the expiry, the signer and that the nonce was never used (durably, in the
 * database, so no instance accepts a signed creation twice). Nothing is stored at `prepare`: any
 * instance can answer the `create`.
 *
 * Keys a wallet creates are bound to it, hold the signed permissions and have no IP whitelist (they
 * are used from wherever the wallet's owner runs code); the secret is answered once, at creation.
 * Managing keys needs a key of the same wallet: it lists, relabels, changes the permissions of (never
 * beyond its own) and deletes that wallet's keys; any other key is "not found".
 */
import { CREATE_API_KEY_FIELDS, MONDAY_KEY_PERMISSIONS, MONDAY_KEY_PRODUCTS, mondayKeyMessage, PERP_DOMAIN_NAME, PERP_DOMAIN_VERSION } from '@tokex/contract';
import type { MondayCreateApiKeyBody, MondayCreatedApiKey } from '@tokex/contract';
import { randomBytes } from 'node:crypto';
import type { ApiKeyInfo, CreatedApiKey } from '@tokex/contract';
import { recoverMessageAddress, type Address, type Hex } from 'viem';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../errors/app-error.ts';
import { hasPermission, MAX_LABEL_LENGTH, validatePermissions, type ApiKeyPermission, type PerpPermission } from '../auth/api-key-model.ts';
import type { ApiKeyService, ApiKeyView, AuthKey } from '../auth/api-key-service.ts';
import { defineTypedData, typedDataDomain, type CompleteTypedData, type TypedDataDomain } from '../chain/typed-data.ts';
import type { Db } from '../storage/database.ts';
import { claimKeyCreationNonce } from './store/api-key-nonce-store.ts';

export { PERP_DOMAIN_NAME, PERP_DOMAIN_VERSION };

/** How long a prepared creation may be signed and submitted. */
export const KEY_CREATION_TTL_MS = 5 * 60_000;
/** The furthest ahead a submitted message's expiry may be (a client may build the message itself). */
export const MAX_KEY_CREATION_TTL_MS = 10 * 60_000;
/** Active perp keys one wallet may hold. */
export const MAX_KEYS_PER_WALLET = 50;

export const createApiKeyType = defineTypedData({
  primaryType: 'CreateApiKey',
  types: {
    CreateApiKey: CREATE_API_KEY_FIELDS,
  },
});

export interface CreateApiKeyMessage {
  wallet: Address;
  label: string;
  /** Comma-separated, in the order READ, TRADE, TRANSFER: `READ,TRADE`. */
  permissions: string;
  nonce: bigint;
  /** Milliseconds since the epoch. */
  expiry: bigint;
}

export interface PerpKeyService {
  readonly domain: TypedDataDomain;
  prepare(input: { address: string; label?: string; permissions: string[] }): { typedData: CompleteTypedData<'CreateApiKey'> };
  create(input: { message: unknown; signature: unknown }): Promise<CreatedApiKey>;
  list(caller: AuthKey): Promise<ApiKeyInfo[]>;
  update(caller: AuthKey, apiKey: string, patch: { label?: string; permissions?: string[] }): Promise<ApiKeyInfo>;
  remove(caller: AuthKey, apiKey: string): Promise<void>;
  /**
   * `POST api-key/create` (docs/perp-api.md "Monday Trade clients"): a key created from the wallet's
   * personal-sign signature of the five-line text message, with READ and TRADE.
   */
  createFromText(input: MondayCreateApiKeyBody): Promise<MondayCreatedApiKey>;
}

/** How far the key-creation message's timestamp may be from the server clock: the requests' window. */
export const TEXT_KEY_WINDOW_MS = 45_000;
/** The label of a key created by `api-key/create` (relabel it with `PATCH api-keys/:apiKey`). */
export const TEXT_KEY_LABEL = 'api-key/create';

export function perpDomain(chainId: number, verifyingContract: string): TypedDataDomain {
  return typedDataDomain({ name: PERP_DOMAIN_NAME, version: PERP_DOMAIN_VERSION, chainId, verifyingContract });
}

function label(value: unknown, field: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new ValidationError(field, 'must be text');
  if (value.length > MAX_LABEL_LENGTH) throw new ValidationError(field, `at most ${MAX_LABEL_LENGTH} characters`);
  return value;
}

function permissions(value: unknown, field: string): PerpPermission[] {
  try {
    return validatePermissions('perp', value) as PerpPermission[];
  } catch {
    throw new ValidationError(field, 'must be a non-empty list of READ, TRADE, TRANSFER');
  }
}

/** The signed text form: the canonical list joined by commas, and nothing else. */
function permissionsFromText(text: string): PerpPermission[] {
  const list = permissions(text.split(','), 'message.permissions');
  if (list.join(',') !== text) throw new ValidationError('message.permissions', 'must list READ, TRADE, TRANSFER in that order, comma-separated, each once');
  return list;
}

function viewOf(k: ApiKeyView): ApiKeyInfo {
  return { apiKey: k.apiKey, label: k.label, permissions: k.permissions as PerpPermission[], createdAt: k.createdAt, updatedAt: k.updatedAt };
}

export function createPerpKeyService(opts: {
  db: Db;
  keys: ApiKeyService;
  chainId: number;
  /** The margin vault (the domain's verifyingContract). */
  verifyingContract: string;
  now?: () => number;
}): PerpKeyService {
  const { db, keys, chainId } = opts;
  const now = opts.now ?? Date.now;
  const domain = perpDomain(chainId, opts.verifyingContract);

  /** The keys `caller` manages: its wallet's active perp keys on this chain (only itself when unbound). */
  async function managed(caller: AuthKey): Promise<ApiKeyView[]> {
    if (caller.userAddress === null) {
      const self = await keys.get(caller.apiKey);
      return self && self.active ? [self] : [];
    }
    const all = await keys.list({ api: 'perp', userAddress: caller.userAddress });
    return all.filter((k) => k.active && k.chainId === chainId);
  }

  async function target(caller: AuthKey, apiKey: string): Promise<ApiKeyView> {
    const found = (await managed(caller)).find((k) => k.apiKey === apiKey);
    if (!found) throw new NotFoundError('apiKey');
    return found;
  }

  return {
    domain,
    prepare(input) {
      const wallet = input.address;
      const perms = permissions(input.permissions, 'permissions');
      const message = {
        wallet,
        label: label(input.label, 'label'),
        permissions: perms.join(','),
        nonce: BigInt(`0x${randomBytes(8).toString('hex')}`),
        expiry: BigInt(now() + KEY_CREATION_TTL_MS),
      };
      return { typedData: createApiKeyType.build(domain, message) };
    },

    async create(input) {
      const m = createApiKeyType.parseMessage(input.message) as unknown as CreateApiKeyMessage;
      const t = now();
      if (m.expiry < BigInt(t)) throw new ValidationError('message.expiry', 'has expired; prepare a new creation');
      if (m.expiry > BigInt(t + MAX_KEY_CREATION_TTL_MS)) throw new ValidationError('message.expiry', 'is more than 10 minutes ahead');
      const lbl = label(m.label, 'message.label');
      const perms = permissionsFromText(m.permissions);
      await createApiKeyType.verifySigner(domain, m as unknown as Record<string, unknown>, input.signature, m.wallet, 'message.wallet');
      // Claimed only once the signature holds, so nobody can burn a wallet's nonces.
      const fresh = await claimKeyCreationNonce(db, {
        wallet: m.wallet,
        nonce: m.nonce.toString(),
        expiry: Number(m.expiry),
        usedAt: t,
        pruneBeforeMs: t - 24 * 60 * 60_000,
      });
      if (!fresh) throw new ConflictError('message.nonce: this signed creation was already used');
      const wallet = m.wallet.toLowerCase();
      const held = (await keys.list({ api: 'perp', userAddress: wallet })).filter((k) => k.active).length;
      if (held >= MAX_KEYS_PER_WALLET) throw new ConflictError(`apiKey: a wallet holds at most ${MAX_KEYS_PER_WALLET} keys; delete one first`);
      const { key, apiSecret } = await keys.create({
        api: 'perp',
        permissions: perms,
        label: lbl,
        ipWhitelist: [],
        chainId,
        userAddress: wallet,
      });
      return { apiKey: key.apiKey, apiSecret, label: key.label, permissions: key.permissions as PerpPermission[] };
    },

    async createFromText(input) {
      if (input.chainID !== chainId) throw new ValidationError('chainID', `must be ${chainId}, the chain this service runs on`);
      const t = now();
      const raw = String(input.timestamp);
      if (!/^[0-9]{10,13}$/.test(raw)) throw new ValidationError('timestamp', 'must be ms (13 digits) or seconds (10 digits) since the epoch');
      // 10 digits: seconds; 13: milliseconds (the clients of the real service send either).
      const tsMs = raw.length <= 10 ? Number(raw) * 1000 : Number(raw);
      if (Math.abs(t - tsMs) > TEXT_KEY_WINDOW_MS) throw new ValidationError('timestamp', 'is outside the 45 s window of the server clock (GET time); sign a new message');
      const nonce = String(input.nonce);
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(nonce)) throw new ValidationError('nonce', 'must be 1 to 64 letters, digits, _ or -');
      // The message exactly as the client wrote it (the address in the case it was sent), with the
      // real service's product name or this venue's: the signer must be the address either way.
      const wallet = input.address.toLowerCase();
      let signed = false;
      for (const product of MONDAY_KEY_PRODUCTS) {
        const message = mondayKeyMessage({ chainID: input.chainID, address: input.address, nonce, timestamp: raw }, product);
        let signer: string;
        try {
          signer = await recoverMessageAddress({ message, signature: input.signature as Hex });
        } catch {
          throw new ValidationError('signature', 'is not a valid secp256k1 signature');
        }
        if (signer.toLowerCase() === wallet) {
          signed = true;
          break;
        }
      }
      if (!signed) throw new ValidationError('signature', 'is not the personal-sign signature of the five-line key-creation message by this address');
      // Claimed only once the signature holds, so nobody can burn a wallet's nonces. `text:` keeps
      // these apart from the EIP-712 creations' decimal nonces in the same table.
      const fresh = await claimKeyCreationNonce(db, {
        wallet,
        nonce: `text:${nonce}`,
        expiry: tsMs + TEXT_KEY_WINDOW_MS,
        usedAt: t,
        pruneBeforeMs: t - 24 * 60 * 60_000,
      });
      if (!fresh) throw new ConflictError('nonce: this signed key creation was already used; sign a message with a new nonce');
      const held = (await keys.list({ api: 'perp', userAddress: wallet })).filter((k) => k.active).length;
      if (held >= MAX_KEYS_PER_WALLET) throw new ConflictError(`apiKey: a wallet holds at most ${MAX_KEYS_PER_WALLET} keys; delete one first`);
      const { key, apiSecret } = await keys.create({
        api: 'perp',
        permissions: [...MONDAY_KEY_PERMISSIONS],
        label: TEXT_KEY_LABEL,
        ipWhitelist: [],
        chainId,
        userAddress: wallet,
      });
      return { apiKey: key.apiKey, apiSecret, permissions: key.permissions as PerpPermission[] };
    },

    async list(caller) {
      return (await managed(caller)).map(viewOf);
    },

    async update(caller, apiKey, patch) {
      await target(caller, apiKey);
      const next: { label?: string; permissions?: ApiKeyPermission[] } = {};
      if (patch.label !== undefined) next.label = label(patch.label, 'label');
      if (patch.permissions !== undefined) {
        const perms = permissions(patch.permissions, 'permissions');
        const beyond = perms.filter((p) => !hasPermission(caller, p));
        if (beyond.length > 0) throw new ForbiddenError(`permissions: this key cannot grant ${beyond.join(', ')}, which it does not hold`);
        next.permissions = perms;
      }
      return viewOf(await keys.update(apiKey, next));
    },

    async remove(caller, apiKey) {
      await target(caller, apiKey);
      await keys.revoke(apiKey);
    },
  };
}
