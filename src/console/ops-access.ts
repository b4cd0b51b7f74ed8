/**
 * Who may use the operator page (docs/console.md, "Operator page"): a caller on the stack's own host,
 * and only through a loopback name. It shows what `tokex status`, `tokex keys list` and `tokex
 * corporate-actions list` show to a shell on the host, and does what `keys revoke` and
 * `corporate-actions retry` do, so it takes the same boundary: the host. An operator elsewhere comes
 * through an SSH tunnel (`ssh -L 8080:127.0.0.1:8080 host`), which arrives from loopback.
 *
 * - The TCP peer is a loopback address (never a forwarded header: TRUSTED_PROXIES does not count).
 * - The Host header names a loopback host (`127.x.x.x`, `[::1]`, `localhost`): a page of another
 *   site whose name an attacker points at 127.0.0.1 (DNS rebinding) sends its own name and is refused.
 * - A write (revoke, retry) carries `X-Tokex-Ops: 1` and, when the browser sends one, an Origin of a
 *   loopback host: another site's page cannot send that header without a CORS preflight, which this
 *   API never answers, so a form or a script elsewhere in the operator's browser cannot revoke a key.
 */
import { isLoopbackAddress } from './demo-access.ts';

export interface OpsAccessInput {
  peerAddress: string | undefined;
  host: string | undefined;
  origin: string | undefined;
  opsHeader: string | string[] | undefined;
  write: boolean;
}

/** `127.0.0.1:8080`, `[::1]:8080`, `localhost:8080` (any port): a name only this host answers to. */
export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  const h = host.trim().toLowerCase();
  const name = h.startsWith('[') ? h.slice(1, h.indexOf(']')) : h.split(':')[0];
  return name === 'localhost' || isLoopbackAddress(name);
}

/** Why the caller is refused, or undefined when it may go on. */
export function opsRefusal(input: OpsAccessInput): string | undefined {
  if (!isLoopbackAddress(input.peerAddress)) return 'not from this host';
  if (!isLoopbackHost(input.host)) return 'not addressed to a loopback name';
  if (!input.write) return undefined;
  if (input.opsHeader !== '1') return 'no X-Tokex-Ops header';
  if (input.origin !== undefined) {
    let host: string;
    try {
      host = new URL(input.origin).host;
    } catch {
      return 'malformed Origin';
    }
    if (!isLoopbackHost(host)) return 'from another site';
  }
  return undefined;
}
