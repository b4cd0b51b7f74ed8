/**
 * The query as both APIs sign it (contract.md §A and §B): parameters sorted by name (stable for a
 * repeated name), encoded as URLSearchParams encodes them. Servers verify and clients sign over this
 * one function, so the two sides cannot drift apart.
 */

/** Query parameters; undefined and null values are left out, an array's items repeat the name. */
export type Query = Record<string, string | number | boolean | undefined | null | ReadonlyArray<string | number | boolean>>;

export function canonicalQuery(query: string | URLSearchParams | Query): string {
  let params: URLSearchParams;
  if (query instanceof URLSearchParams) params = query;
  else if (typeof query === 'string') params = new URLSearchParams(query.startsWith('?') ? query.slice(1) : query);
  else {
    params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (v === undefined || v === null) continue;
      if (Array.isArray(v)) for (const item of v) params.append(k, String(item));
      else params.append(k, String(v));
    }
  }
  const entries = [...params.entries()];
  // Array.prototype.sort is stable, so repeated names keep their order.
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return new URLSearchParams(entries).toString();
}

/**
 * The query as Anchored's Node.js helper signs it (anchored-reference.md §2.2, source A10): the same
 * sorted parameters, `key=value` joined with `&`, **without** percent-encoding. For values of
 * letters, digits and `-_.*` it is canonicalQuery's text; for others (`:`, `,`, a space, `/`…) a
 * server accepts a signature over either form, so a client written from either recipe works.
 */
export function unencodedCanonicalQuery(query: string): string {
  const params = new URLSearchParams(query.startsWith('?') ? query.slice(1) : query);
  const entries = [...params.entries()];
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return entries.map(([k, v]) => `${k}=${v}`).join('&');
}

/** `path` plus `?query` when there is a query. */
export function signedUri(path: string, query: string): string {
  return query === '' ? path : `${path}?${query}`;
}
