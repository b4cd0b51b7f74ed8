/**
 * Who may read the demo credentials through the console: only a caller on this machine (the socket's
 * peer is a loopback address; no forwarded header counts), and only when the stack runs its own
 * throw-away anvil in demo mode, whose keys are anvil's well-known dev keys. Anyone else gets the
 * read-only page.
 */
import net from 'node:net';

/** 127.0.0.0/8, ::1, and IPv4 loopback mapped into IPv6. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  let a = address.trim().toLowerCase();
  if (a.startsWith('::ffff:')) a = a.slice('::ffff:'.length);
  if (net.isIPv4(a)) return a.split('.')[0] === '127';
  if (net.isIPv6(a)) return a === '::1' || a === '0:0:0:0:0:0:0:1';
  return false;
}

export interface DemoAccessInput {
  /** The TCP peer (`req.socket.remoteAddress`), never a header. */
  peerAddress: string | undefined;
  /** The stack spawned its own anvil (no RPC_URL). */
  ownAnvil: boolean;
  /** DEMO_MODE: demo.json exists only then. */
  demoMode: boolean;
}

export function mayRevealDemoCredentials(input: DemoAccessInput): boolean {
  return input.ownAnvil && input.demoMode && isLoopbackAddress(input.peerAddress);
}

/** chain-wiring.ts spawns anvil exactly when RPC_URL is unset or empty. */
export function runsOwnAnvil(config: { rpcUrl?: string }): boolean {
  return !config.rpcUrl;
}
