/** `tokex start`: runs the stack in the foreground until Ctrl-C, then stops every part cleanly. */
import { loadConfig, type Role } from '../config/app-config.ts';
import { createLogger, flushLogger } from '../lib/logger.ts';
import { startStack } from './stack.ts';
import { applyServingV8Flags } from './v8-serving-flags.ts';
import { bannerTitle } from './start-banner.ts';
import { checkAppDatabase } from './storage-wiring.ts';
import { isLoopbackHost } from '../http/tls-options.ts';
import { awaitRolesFresh } from './await-roles-fresh.ts';
import { STATUS_ROLES } from '../observability/role-status.ts';
import { listRoleStatus } from '../storage/role-status-store.ts';

export async function runStack(roles: Role | readonly Role[], chains?: readonly number[]): Promise<void> {
  const role = typeof roles === 'string' ? roles : roles.join(',');
  const config = loadConfig();
  // A database written by a newer release is refused before anything starts (the chain included):
  // this release cannot read it, and must write nothing into it (docs/upgrades.md).
  await checkAppDatabase(config);
  const logger = createLogger({ level: config.logLevel, requests: config.logRequests, format: config.logFormat });

  // The handlers go in before anything starts: a SIGTERM that arrives while the stack starts (a
  // process manager giving up, or one sent the moment the banner shows on a busy machine) must
  // still stop it cleanly, not kill the process with the default action and leave anvil to its
  // watchdog and the logs unflushed.
  let stack: Awaited<ReturnType<typeof startStack>> | undefined;
  let stopping = false;
  const stop = (running: NonNullable<typeof stack>) => {
    running
      .stop()
      .then(
        () => {
          logger.info('stopped');
          return 0;
        },
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          return 1;
        },
      )
      .then(async (code) => {
        await flushLogger(logger);
        process.exit(code);
      });
  };
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, stack ? 'stopping' : 'stopping once the stack has started');
    if (stack) stop(stack);
  };
  // A renewed certificate (certbot, a secret mount) is picked up without dropping a connection.
  process.on('SIGHUP', () => {
    if (!stopping) stack?.reloadTls();
  });
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  // Before any route is built: request objects stay young (v8-serving-flags.ts says why), except
  // beside the perp engine, whose long-lived objects V8 rightly pretenures. Here, in the process's
  // entry, rather than in startStack: a V8 flag is the whole process's, and tests start stacks in
  // shared workers.
  applyServingV8Flags(typeof roles === 'string' ? [roles] : roles);
  stack = await startStack(config, { role: roles, logger, ...(chains === undefined ? {} : { chains }) });
  if (stopping) {
    stop(stack);
    return;
  }

  // The whole stack's roles fresh before the banner, so that `tokex status` right after it shows
  // them so (await-roles-fresh.ts). Only where this process runs them all: a process of some roles
  // cannot tell which others run elsewhere.
  const running = stack;
  const starting = await awaitRolesFresh({
    roles: (typeof roles === 'string' ? [roles] : roles).includes('all') && chains === undefined ? STATUS_ROLES : [],
    publish: () => running.publishStatus(),
    read: () => listRoleStatus(running.db),
    staleMs: config.readinessStaleMs,
    // Roles report within about a second; one waiting on another process's lease may not for long.
    timeoutMs: 20_000,
  });
  if (stopping) return;

  const lines = [bannerTitle(role)];
  if (starting) lines.push(`  roles      not fresh yet: ${starting} (npx tokex status)`);
  if (chains !== undefined) lines.push(`  per chain  indexer, executor and relayer of chain ${chains.join(', ')} only (--chain)`);
  for (const note of stack.upgradeNotes) lines.push(`  upgrade    ${note}`);
  if (stack.stockBaseUrl) {
    lines.push(`  console    ${stack.stockBaseUrl}/console   (trade both venues in a browser; docs/console.md)`);
    lines.push(`  stock API  ${stack.stockBaseUrl}/api/v1   (reference: ${stack.stockBaseUrl}/docs)`);
    lines.push(`  streams    ${stack.stockBaseUrl.replace(/^http/, 'ws')}/api/v1/ws`);
  }
  if (stack.perpBaseUrl) {
    lines.push(`  perp API   ${stack.perpBaseUrl}/v4/public/trader   (reference: ${stack.perpBaseUrl}/docs)`);
    lines.push(`  streams    ${stack.perpBaseUrl.replace(/^http/, 'ws')}/v4/public/ws`);
  }
  if (stack.stockBaseUrl || stack.perpBaseUrl) {
    if (config.tls) lines.push(`  TLS        ${config.tls.certFile} (HTTPS and WSS; SIGHUP reloads the certificate)`);
    else if (isLoopbackHost(config.host)) lines.push('  TLS        plain HTTP on loopback: set TLS_CERT_FILE/TLS_KEY_FILE for HTTPS');
    else if (config.trustedProxies.length > 0) lines.push(`  TLS        plain HTTP on ${config.host}: HTTPS expected at the trusted proxies (${config.trustedProxies.join(', ')})`);
    else lines.push(`  TLS        plain HTTP on ${config.host}, reachable by others: set TLS_CERT_FILE/TLS_KEY_FILE for HTTPS (docs/deployment.md)`);
  }
  lines.push(`  chain      ${stack.rpcUrl} (chain id ${config.chainId})`);
  // The other chains' stock venues (docs/deployment.md, "Several chains"): x-api-chain-id picks one.
  for (const c of stack.chains.slice(1)) lines.push(`  chain      ${c.rpcUrl} (chain id ${c.chainId}, stock venue; data ${c.dataDir})`);
  for (const c of stack.unstartedChains) lines.push(`  chain      ${c.chainId} DID NOT START: ${c.reason} (served once its node answers, tried again every 10 s; the log has the error)`);
  lines.push(`  data       ${config.dataDir}${config.databaseUrl ? ' (database: PostgreSQL)' : ''}`);
  lines.push(`  metrics    ${stack.metricsUrl ?? (config.metrics ? 'not served (see the log)' : 'off (METRICS_PORT=off)')}`);
  if (stack.demoFile) lines.push(`  demo.json  ${stack.demoFile}  (demo wallets and API keys)`);
  if (stack.sandboxUrl) lines.push(`  sandbox    ${stack.sandboxUrl}   (on: clock, prices, funds, corporate actions, faults, snapshots and reset; bearer token in demo.json; docs/sandbox.md)`);
  lines.push(`  logs       ${config.logRequests ? 'one line per request (LOG_REQUESTS=0 turns them off)' : 'warnings and events; LOG_REQUESTS=1 adds one line per request'}`);
  lines.push('  Ctrl-C to stop');
  process.stdout.write(lines.join('\n') + '\n');
}
