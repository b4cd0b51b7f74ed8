/**
 * One Click (seed §4A, docs/one-click.md): the delegation a bound wallet signs (status, prepare,
 * enable, disable), and what every `send` endpoint shares: the optional `gasLimit`, the
 * `Idempotency-Key` header and the relayed answer.
 */
import { IdempotencyHeaders } from '../common/idempotency.ts';
import { SIGNATURE_PATTERN } from '../common/patterns.ts';
import type { TypedFields } from '../common/typed-data-fields.ts';
import { AddressIn, AnyObject, Nullable, StringEnum, Type, type Static } from '../common/schema-kit.ts';
import { STOCK_ANCHORED_ONE_CLICK_STATUSES, STOCK_ONE_CLICK_STATUSES, STOCK_RELAY_STATUSES } from './stock-enums.ts';
import { StockAddressOut, StockDeadlineIn } from './stock-schemas.ts';

// ------------------------------------------------------------------ sends

/** The optional gas limit every send takes (seed §4A: "an optional gasLimit can be passed"). */
export const StockGasLimitIn = () =>
  Type.Union([Type.Integer(), Type.String()], { description: "gas limit of the relayed transaction (default: the node's estimate × 1.5)" });
export type StockGasLimit = Static<ReturnType<typeof StockGasLimitIn>>;

/** The optional `Idempotency-Key` of every send (docs/one-click.md, "Retries"). */
export const StockSendHeaders = IdempotencyHeaders(
  'names the send (1 to 64 visible ASCII characters, unique per API key): a retry with the same key is answered with the transaction the first attempt queued, never a second one; the same key with another request is 409',
);
export type StockSendHeaders = Static<typeof StockSendHeaders>;

/** A send's `userAddress`: it acts only for the key's bound wallet. */
export const StockSendUserIn = () => Type.Optional(AddressIn({ description: "optional; must be the key's bound wallet (a send acts only for it)" }));

/** What every relayed send answers. */
export const StockRelayProps = {
  requestId: Type.String({ description: 'the relay request (server log and support)' }),
  status: StringEnum(STOCK_RELAY_STATUSES, { description: 'pending: the receipt did not come within the wait; poll the list or detail' }),
  txHash: Nullable(Type.String()),
  blockNumber: Type.Optional(Nullable(Type.String())),
  gasUsed: Type.Optional(Nullable(Type.String())),
};
export const StockRelaySchema = Type.Object(StockRelayProps);
export type StockRelay = Static<typeof StockRelaySchema>;

/** `orders/send`, `orders/with-deposit/send`, `DELETE orders/{orderId}/send`. */
export const StockOrderSendSchema = Type.Object({
  ...StockRelayProps,
  orderId: Type.Optional(Nullable(Type.String(), { description: 'the order placed (or cancelled), once mined' })),
  orderIds: Type.Array(Type.String()),
});
export type StockOrderSend = Static<typeof StockOrderSendSchema>;

/** `{cash|stock}/{deposits|withdrawals}/send`. */
export const StockOperationSendSchema = Type.Object({
  ...StockRelayProps,
  operationId: Type.Optional(Nullable(Type.String(), { description: 'the operation, once mined; poll its detail until final' })),
  operationIds: Type.Array(Type.String()),
});
export type StockOperationSend = Static<typeof StockOperationSendSchema>;

// ------------------------------------------------------------------ delegation

/**
 * `GET 1ct/status`: `status` in Anchored's values (anchored-reference.md §4.6: every send needs
 * `enable`), `delegationStatus` in tokex's (what `status` answered before issue 30).
 */
export const StockOneClickStatusSchema = Type.Object({
  status: StringEnum(STOCK_ANCHORED_ONE_CLICK_STATUSES, { description: 'enable or disabled, as Anchored answers it' }),
  delegationStatus: StringEnum(STOCK_ONE_CLICK_STATUSES, { description: 'enabled or disabled: the same state in tokex\'s words' }),
  delegatee: StockAddressOut({ description: 'the relayer the bound wallet delegates to' }),
});
export type StockOneClickStatus = Static<typeof StockOneClickStatusSchema>;

/** `POST 1ct/enable` and `1ct/disable`. */
export const StockOneClickChangeSchema = Type.Object({
  ...StockOneClickStatusSchema.properties,
  txHash: Nullable(Type.String(), { description: 'the relayed delegateBySig or revokeDelegation (null when nothing had to change)' }),
  requestId: Type.Optional(Nullable(Type.String())),
});
export type StockOneClickChange = Static<typeof StockOneClickChangeSchema>;

export const StockOneClickPrepareBodySchema = Type.Object({ deadline: StockDeadlineIn() }, { additionalProperties: false });
export type StockOneClickPrepareBody = Static<typeof StockOneClickPrepareBodySchema>;

/** The One Click delegation as complete EIP-712 typed data, what `eth_signTypedData_v4` takes (stock-typed-data.ts: DELEGATE_FIELDS). */
export interface StockDelegateTypedData {
  domain: { name: string; version: string; chainId: number; verifyingContract: `0x${string}` };
  types: Record<string, TypedFields>;
  primaryType: 'Delegate';
  message: Record<string, unknown>;
}

/** `POST 1ct/prepare`: the EIP-712 Delegate payload for the bound wallet to sign. */
export const StockOneClickPreparedSchema = Type.Object({
  delegatee: StockAddressOut(),
  nonce: Type.Number({ description: "the router's delegation nonce of the wallet for this delegatee (a uint64, printed exactly)" }),
  deadline: Type.Integer(),
  signPayload: Type.Unsafe<StockDelegateTypedData>(
    AnyObject({
      description: 'complete EIP-712 typed data (domain, types with EIP712Domain, primaryType Delegate, message) for eth_signTypedData_v4',
    }),
  ),
});
export type StockOneClickPrepared = Static<typeof StockOneClickPreparedSchema>;

export const StockOneClickEnableBodySchema = Type.Object(
  { signature: Type.String({ pattern: SIGNATURE_PATTERN }), deadline: StockDeadlineIn() },
  { additionalProperties: false },
);
export type StockOneClickEnableBody = Static<typeof StockOneClickEnableBodySchema>;
