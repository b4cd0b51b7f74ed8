/**
 * The scopes of a stock API key (anchored-reference.md §2.3, docs/api-keys-secrets.md "Stock key
 * scopes"): as on the real service, a key holds a list of `(chainId, productType, access)` and a
 * request is served only under the scope naming its `x-api-chain-id` and `x-api-p`. `READ_ONLY`
 * may GET; `WRITABLE` may GET, POST and DELETE. Written here once, so the server's key model, the
 * CLI and any client parse and print a scope the same way.
 *
 * The string form is `chainId:productType:ACCESS`, e.g. `8453:Anchored:WRITABLE`: what an operator
 * types (`tokex keys create --scope …`) and what a table prints. Answers carry the object form.
 */
import { StringEnum, Type, type Static } from '../common/schema-kit.ts';

/** A scope's access level, exact upper case as the real service spells it. */
export const STOCK_ACCESS_LEVELS = ['READ_ONLY', 'WRITABLE'] as const;
export type StockAccess = (typeof STOCK_ACCESS_LEVELS)[number];

/** A product name (`x-api-p`): 1 to 32 visible ASCII characters, compared case-sensitively. */
export const STOCK_PRODUCT_MAX_LENGTH = 32;
/**
 * Scopes one key may hold: far more than the chains and products the real service lists (six
 * chains, two products), and a bound on what one key costs to store and to check.
 */
export const STOCK_MAX_KEY_SCOPES = 64;

export interface StockScope {
  chainId: number;
  /** `x-api-p` exactly (case-sensitive): `Anchored`, `MondayTrade`. */
  productType: string;
  access: StockAccess;
}

export const StockScopeSchema = Type.Object(
  {
    chainId: Type.Integer({ minimum: 1, description: 'the chain (`x-api-chain-id`) this scope covers' }),
    productType: Type.String({ minLength: 1, maxLength: STOCK_PRODUCT_MAX_LENGTH, description: 'the product (`x-api-p`), case-sensitive' }),
    access: StringEnum(STOCK_ACCESS_LEVELS, { description: 'READ_ONLY: GET only; WRITABLE: GET, POST and DELETE' }),
  },
  { additionalProperties: false },
);
export type StockScopeOut = Static<typeof StockScopeSchema>;

/** 1 to 16 digits without a leading zero: a positive chain id as `x-api-chain-id` carries it. */
const CHAIN_ID_TEXT = /^[1-9][0-9]{0,15}$/;
/** Visible ASCII (no space, no control character): what an `x-api-p` header can carry exactly. */
const PRODUCT_TEXT = /^[!-~]+$/;

/** Why `productType` is not a product name, or undefined when it is one. */
export function stockProductIssue(productType: unknown): string | undefined {
  if (typeof productType !== 'string' || productType.length === 0) return 'the product is empty';
  if (productType.length > STOCK_PRODUCT_MAX_LENGTH) return `the product is longer than ${STOCK_PRODUCT_MAX_LENGTH} characters`;
  if (!PRODUCT_TEXT.test(productType)) return 'the product must be visible ASCII characters (no spaces)';
  return undefined;
}

/** Why `chainId` is not a chain id, or undefined when it is one. */
export function stockChainIdIssue(chainId: unknown): string | undefined {
  if (typeof chainId !== 'number' || !Number.isSafeInteger(chainId) || chainId <= 0) return 'the chain id must be a positive integer';
  return undefined;
}

/** Why `scope` is not a valid scope object (the first rule it breaks), or undefined. */
export function stockScopeIssue(scope: unknown): string | undefined {
  if (typeof scope !== 'object' || scope === null || Array.isArray(scope)) return 'must be an object {chainId, productType, access}';
  const s = scope as Record<string, unknown>;
  const extra = Object.keys(s).find((k) => k !== 'chainId' && k !== 'productType' && k !== 'access');
  if (extra !== undefined) return `unknown field ${extra}`;
  return stockChainIdIssue(s.chainId) ?? stockProductIssue(s.productType) ?? accessIssue(s.access);
}

function accessIssue(access: unknown): string | undefined {
  return typeof access === 'string' && (STOCK_ACCESS_LEVELS as readonly string[]).includes(access)
    ? undefined
    : `unknown access ${JSON.stringify(access)}: must be ${STOCK_ACCESS_LEVELS.join(' or ')}`;
}

/** `8453:Anchored:WRITABLE`. */
export function formatStockScope(scope: StockScope): string {
  return `${scope.chainId}:${scope.productType}:${scope.access}`;
}

/**
 * The scope a string names, or why it names none. The chain id is before the first `:` and the
 * access after the last, so nothing is ambiguous; the product between them must be a product name
 * (which has no `:` anyway, being visible ASCII compared exactly, but the rule does not need that).
 * Nothing is trimmed or case-folded: `anchored` is another product than `Anchored`.
 */
export function parseStockScope(text: unknown): { scope: StockScope } | { reason: string } {
  const shown = JSON.stringify(text);
  if (typeof text !== 'string') return { reason: `${shown} is not a scope: expected chainId:product:ACCESS, e.g. 8453:Anchored:WRITABLE` };
  const first = text.indexOf(':');
  const last = text.lastIndexOf(':');
  if (first === -1 || first === last) return { reason: `${shown} is not a scope: expected chainId:product:ACCESS, e.g. 8453:Anchored:WRITABLE` };
  const chainText = text.slice(0, first);
  const productType = text.slice(first + 1, last);
  const access = text.slice(last + 1);
  if (!CHAIN_ID_TEXT.test(chainText) || !Number.isSafeInteger(Number(chainText))) {
    return { reason: `${shown}: bad chain id ${JSON.stringify(chainText)}: must be a positive integer without a leading zero` };
  }
  const productReason = stockProductIssue(productType);
  if (productReason !== undefined) return { reason: `${shown}: ${productReason}` };
  const accessReason = accessIssue(access);
  if (accessReason !== undefined) return { reason: `${shown}: ${accessReason}` };
  return { scope: { chainId: Number(chainText), productType, access: access as StockAccess } };
}

/** The scope of `scopes` covering this chain and product (exact, case-sensitive), or undefined. */
export function findStockScope<S extends StockScope>(scopes: readonly S[], chainId: number, productType: string): S | undefined {
  for (const s of scopes) if (s.chainId === chainId && s.productType === productType) return s;
  return undefined;
}

/** Whether a scope of this access may make a request with this method: READ_ONLY only reads. */
export function stockAccessAllows(access: StockAccess, method: string): boolean {
  return access === 'WRITABLE' || method === 'GET' || method === 'HEAD';
}
