/**
 * What the sandbox keeps in a process whose configuration turns it on (SANDBOX, docs/sandbox.md):
 * its token and the faults in force. The stack makes one per process and hands it to the roles:
 * the stock API serves the routes, both APIs and the executor read the faults.
 */
import { SANDBOX_PATH } from '@tokex/contract';
import type { SandboxClock } from './sandbox-clock.ts';
import { createFaultRegistry, type FaultRegistry } from './fault-registry.ts';
import { sandboxToken } from './sandbox-token.ts';

export interface SandboxState {
  /** The bearer token (never logged). */
  token: string;
  faults: FaultRegistry;
  /**
   * Whether this process runs every role (`--role all`): faults act in process only, so with the
   * roles in separate processes they would reach some parts and not others, and are refused.
   */
  allInOne: boolean;
  /** Where the routes are on the stock API's server: the service prefix, then `/sandbox/v1`. */
  path: string;
  /** The clock control (sandbox-clock.ts), made by the stack before its roles start. */
  clock?: SandboxClock;
  /**
   * Snapshots, revert and reset (src/app/revertible-stack.ts): only where the venue can be started
   * again in this process (every role here, the embedded SQLite storage); undefined elsewhere, and
   * the routes answer 409.
   */
  venue?: SandboxVenueControl;
}

/** What the snapshot routes ask of the process that runs the venue (docs/sandbox.md, "Snapshots"). */
export interface SandboxVenueControl {
  snapshot(): Promise<{ id: string; createdAt: number; ms: number }>;
  list(): Array<{ id: string; createdAt: number }>;
  revert(id: string): Promise<{ id: string; dropped: string[]; ms: number }>;
  drop(id: string): void;
  reset(): Promise<{ ms: number; dropped: string[] }>;
  /**
   * True while the venue is stopped and started again from one of the routes above: the stock API
   * serving that request then closes without waiting for its answer (which waits for the new venue).
   */
  readonly restarting: boolean;
}

export function createSandboxState(opts: { dataDir: string; allInOne: boolean; stockApiPrefix: string }): SandboxState {
  const path = `${opts.stockApiPrefix}${SANDBOX_PATH}`;
  return { token: sandboxToken(opts.dataDir), faults: createFaultRegistry({ exemptPrefixes: [path] }), allInOne: opts.allInOne, path };
}
