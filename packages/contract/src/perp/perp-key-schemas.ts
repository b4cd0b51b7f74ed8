/**
 * What the wallet signs to act through the API (docs/perp-api.md "API keys", "One-Click Trade"):
 * API keys created from an EIP-712 CreateApiKey signature and managed with a key; the session
 * signer of One-Click Trade enabled from an EnableSession signature. The `prepare` calls answer the
 * typed data, the wallet signs its message, the next call takes the message back with the signature.
 */
import { SIGNATURE_PATTERN, VISIBLE_ASCII_PATTERN } from '../common/patterns.ts';
import { AddressIn, AnyObject, Millis, Nullable, Type, type Static } from '../common/schema-kit.ts';
import { MAX_API_KEY_LABEL } from './perp-enums.ts';
import { PrepareVenueDelegateBodySchema } from './perp-monday-schemas.ts';
import { PermissionList, PermissionsOut, SignatureIn, TypedDataSchema, type TypedData } from './perp-schemas.ts';

// ------------------------------------------------------------------ API keys

const LabelIn = Type.String({ maxLength: MAX_API_KEY_LABEL, description: 'free text for the owner' });

export const PrepareApiKeyBodySchema = Type.Object(
  {
    address: AddressIn({ description: 'the wallet that signs and owns the key' }),
    label: Type.Optional(LabelIn),
    permissions: PermissionList,
  },
  { additionalProperties: false },
);
export type PrepareApiKeyBody = Static<typeof PrepareApiKeyBodySchema>;

export const PreparedApiKeySchema = Type.Object({
  typedData: TypedDataSchema(
    'complete EIP-712 typed data for eth_signTypedData_v4: domain TokexPerp / 1 / chain id / margin vault, primaryType CreateApiKey(address wallet,string label,string permissions,uint64 nonce,uint64 expiry); nonce and expiry (ms) are decimal strings',
  ),
});
export type PreparedApiKey = { typedData: TypedData };

export const CreateApiKeyBodySchema = Type.Object(
  {
    // Printed as a bare object (no additionalProperties), as the document always has.
    message: Type.Unsafe<Record<string, unknown>>({ type: 'object', description: 'typedData.message as prepare answered it' }),
    signature: Type.String({ pattern: SIGNATURE_PATTERN }),
  },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeyBodySchema>;

/** The answer of `POST api-keys`: the only one that carries the secret. */
export const CreatedApiKeySchema = Type.Object({
  apiKey: Type.String(),
  apiSecret: Type.String({ description: 'shown only in this answer; store it safely' }),
  label: Type.String(),
  permissions: PermissionsOut(),
});
export type CreatedApiKey = Static<typeof CreatedApiKeySchema>;

/** A key as `GET api-keys` and `PATCH api-keys/{apiKey}` answer it, never with its secret. */
export const ApiKeyInfoSchema = Type.Object({
  apiKey: Type.String(),
  label: Type.String(),
  permissions: PermissionsOut(),
  createdAt: Millis(),
  updatedAt: Millis(),
});
export type ApiKeyInfo = Static<typeof ApiKeyInfoSchema>;

export const ApiKeyParamsSchema = Type.Object({ apiKey: Type.String({ minLength: 1, maxLength: 128, pattern: VISIBLE_ASCII_PATTERN }) });
export type ApiKeyParams = Static<typeof ApiKeyParamsSchema>;

export const UpdateApiKeyBodySchema = Type.Object(
  { label: Type.Optional(LabelIn), permissions: Type.Optional(PermissionList) },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateApiKeyBody = Static<typeof UpdateApiKeyBodySchema>;

export const DeletedApiKeySchema = Type.Object({ apiKey: Type.String(), deleted: Type.Boolean() });
export type DeletedApiKey = Static<typeof DeletedApiKeySchema>;

// ------------------------------------------------------------------ One-Click Trade

export const OneClickStatusSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'true while the session signer may sign orders: enabled, not disabled, not expired' }),
    sessionAddress: Nullable(Type.String(), { description: 'the last session signer enabled (EIP-55), also after it ended; null when none ever was' }),
    expiresAt: Nullable(Type.Integer(), { description: 'ms; when the last session ends (or ended)' }),
    enabledAt: Nullable(Type.Integer(), { description: 'ms; when the last session was enabled' }),
  },
  { additionalProperties: false },
);
export type OneClickStatus = Static<typeof OneClickStatusSchema>;

export const PrepareSessionKeyBodySchema = Type.Object(
  {
    sessionAddress: AddressIn({ description: 'the session signer: a key the trading program holds, not the wallet' }),
    expiresAt: Millis({ description: 'ms, in the future and at most 30 days ahead' }),
  },
  { additionalProperties: false },
);
/**
 * A session key the trading program holds (`sessionAddress`), or the venue's own delegate
 * (`{"delegate":"venue"}`, docs/perp-api.md "Monday Trade clients"): orders signed only by the
 * API key are then accepted for the wallet.
 */
export const PrepareOneClickBodySchema = Type.Union([PrepareSessionKeyBodySchema, PrepareVenueDelegateBodySchema]);
export type PrepareOneClickBody = Static<typeof PrepareOneClickBodySchema>;

export const PreparedOneClickSchema = Type.Object({
  typedData: TypedDataSchema(
    "complete EIP-712 typed data for eth_signTypedData_v4: domain TokexPerp / 1 / chain id / margin vault (the orders' domain), primaryType EnableSession(address account,address session,uint64 expiresAt,uint64 nonce); expiresAt (ms) and nonce are decimal strings",
  ),
});

export const EnableOneClickBodySchema = Type.Object(
  {
    message: AnyObject({ description: 'typedData.message exactly as one-click/prepare answered it' }),
    signature: SignatureIn("the wallet's EIP-712 signature (a session key's is refused)"),
  },
  { additionalProperties: false },
);
export type EnableOneClickBody = Static<typeof EnableOneClickBodySchema>;

/** `one-click/disable` takes no body, or `{}`. */
export const DisableOneClickBodySchema = Type.Unsafe<Record<string, never>>({
  type: 'object',
  additionalProperties: false,
  maxProperties: 0,
  description: 'no body, or {}',
});
