/** EIP-712 type definitions as the wire carries them: the fields of each struct, in signing order. */
export type TypedField = { readonly name: string; readonly type: string };
export type TypedFields = readonly TypedField[];

/** A struct's type string, as `typeHash` hashes it: `Name(type1 name1,type2 name2)`. */
export function encodeTypeOf(name: string, fields: TypedFields): string {
  return `${name}(${fields.map((f) => `${f.type} ${f.name}`).join(',')})`;
}
