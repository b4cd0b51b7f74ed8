/** Exact-address whitelist matching; an IPv4-mapped IPv6 peer (::ffff:1.2.3.4) matches its IPv4 form. */
import net from 'node:net';

export function normalizeIp(ip: string): string {
  const trimmed = ip.trim();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(trimmed);
  if (mapped) return mapped[1];
  if (net.isIPv6(trimmed)) {
    // Canonical lower-case compressed form so `0:0:0:0:0:0:0:1` equals `::1`.
    try {
      return new URL(`http://[${trimmed}]/`).hostname.slice(1, -1);
    } catch {
      return trimmed.toLowerCase();
    }
  }
  return trimmed;
}

export function isValidIp(ip: string): boolean {
  return net.isIP(ip.trim()) !== 0;
}

// Normalised whitelists per list object: keys are cached per instance, so this is built once per lookup.
const normalized = new WeakMap<readonly string[], Set<string>>();

/**
 * Whether `peer` is on the whitelist. A peer without an address (the client disconnected before it
 * was read) is never allowed; an empty whitelist allows nobody.
 */
export function ipAllowed(peer: string | undefined, whitelist: readonly string[]): boolean {
  if (peer === undefined || peer === '' || whitelist.length === 0) return false;
  let set = normalized.get(whitelist);
  if (!set) normalized.set(whitelist, (set = new Set(whitelist.map(normalizeIp))));
  return set.has(normalizeIp(peer));
}
