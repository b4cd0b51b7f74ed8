/**
 * The building blocks of every schema in this package, on TypeBox: a schema is plain JSON Schema
 * (what Fastify validates and serialises with, and what the OpenAPI documents print) and its
 * TypeScript type is derived from it with `Static`, so a shape is written once.
 *
 * TypeBox writes a nullable value and a string enum as `anyOf` unions; the helpers here write them
 * as `{type: [T, 'null']}` and `{type: 'string', enum}` instead, the forms the documents have always
 * printed and that fast-json-stringify serialises without trying each branch.
 */
import { Type, type SchemaOptions, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { ADDRESS_PATTERN, DECIMAL_PATTERN, SIGNED_DECIMAL_PATTERN } from './patterns.ts';

export { Type };
export type { Static, TSchema };

/** `{type: 'string', enum: values}` typed as the union of the values. */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** `{type: [the schema's type, 'null']}`: the value or null. The schema must have a single `type`. */
export function Nullable<S extends TSchema>(schema: S, options: SchemaOptions = {}): TUnsafe<Static<S> | null> {
  const { type, ...rest } = schema as TSchema & { type?: unknown };
  if (typeof type !== 'string') throw new Error('Nullable: the schema needs a single `type`');
  return Type.Unsafe<Static<S> | null>({ ...rest, type: [type, 'null'], ...options });
}

/** An object of any keys (`{type: 'object', additionalProperties: true}`), as typed data's parts are. */
export function AnyObject(options: SchemaOptions = {}): TUnsafe<Record<string, unknown>> {
  return Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, ...options });
}

/** A request's decimal amount: digits with an optional fraction, no sign or exponent. */
export const DecimalIn = (options: SchemaOptions = {}) => Type.String({ pattern: DECIMAL_PATTERN, ...options });
/** An answer's exact decimal string. */
export const DecimalOut = (options: SchemaOptions = {}) => Type.String({ description: 'exact decimal string', ...options });
export const SignedDecimalIn = (options: SchemaOptions = {}) => Type.String({ pattern: SIGNED_DECIMAL_PATTERN, description: 'signed decimal string', ...options });
export const AddressIn = (options: SchemaOptions = {}) => Type.String({ pattern: ADDRESS_PATTERN, ...options });
export const Millis = (options: SchemaOptions = {}) => Type.Integer({ description: 'milliseconds since the Unix epoch', ...options });
