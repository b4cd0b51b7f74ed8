/**
 * A credential header sent twice is refused as such by both APIs' auth hooks. Node joins the values
 * of a repeated custom header with ", ", so without this check the joined text would reach the
 * key lookup or the chain comparison and be refused there, under another cause (an unknown key, a
 * wrong chain) than the one the API documents. The raw header list still has each occurrence.
 */

/** Whether `name` (as sent, any case) is `lower` (lower case), without allocating. */
function sameName(name: string, lower: string): boolean {
  if (name.length !== lower.length) return false;
  for (let i = 0; i < name.length; i++) {
    let c = name.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    if (c !== lower.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * The first of `names` (lower case, at most 31) that `rawHeaders` (Node's `[name, value, ...]`
 * list) carries more than once, or undefined.
 */
export function repeatedHeader(rawHeaders: readonly string[], names: readonly string[]): string | undefined {
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    for (let j = 0; j < names.length; j++) {
      if (!sameName(name, names[j])) continue;
      const bit = 1 << j;
      if (seen & bit) return names[j];
      seen |= bit;
      break;
    }
  }
  return undefined;
}
