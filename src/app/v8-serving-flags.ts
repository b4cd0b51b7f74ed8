/**
 * V8 settings for a process that serves requests (docs/performance.md, "Several chains in one
 * stock API"): allocation-site pretenuring off.
 *
 * Why: V8 moves an allocation site to old-space allocation when most of its objects survived a
 * young collection. A request's objects (Node's IncomingMessage, its headers, the response) live
 * for one request, but a burst of other allocation while requests are in flight (a chain's refresh,
 * a large JSON answer) makes young collections frequent enough that they look long-lived; from
 * then on every request's objects are allocated in old space and die there. Measured on a stock
 * API process serving two chains: young collections of 11.6 ms against 3.1, old space 110 MB
 * against 58, and 13-14 µs more CPU a request, for the same requests and the same retained heap;
 * with pretenuring off the two processes are alike. It is V8's flag, read when it decides, so it is
 * set by `tokex start` (run-stack.ts) rather than on every command line; an operator who passes a
 * pretenuring flag of their own (`node --allocation-site-pretenuring`) keeps it, and a process
 * running the perp engine keeps V8's default (below).
 */
import v8 from 'node:v8';

export function applyServingV8Flags(roles: readonly string[], execArgv: readonly string[] = process.execArgv): boolean {
  // (Node refuses V8's pretenuring flags in NODE_OPTIONS: the command line is the only other place.)
  if (execArgv.some((a) => a.includes('pretenuring'))) return false;
  // The engine's orders, positions and events do live long: with pretenuring off its full bench
  // ran about 13 % slower (390 k against 340 k ops/s). A process that runs it keeps V8's default.
  if (roles.includes('perp-engine') || roles.includes('all')) return false;
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
  return true;
}
