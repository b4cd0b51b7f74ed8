/** `tokex start`: runs the stack in the foreground until Ctrl-C, then stops every part cleanly. */
import { loadConfig, type Role } from '../config/app-config.ts';
import { createLogger, flushLogger } from '../lib/logger.ts';
import { startStack } from './stack.ts';

export async function runStack(role: Role): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel });
  const stack = await startStack(config, { role, logger });

  const lines = [`tokex ${role} running`];
  if (stack.stockBaseUrl) lines.push(`  stock API  ${stack.stockBaseUrl}/api/v1   (OpenAPI: ${stack.stockBaseUrl}/openapi.json)`);
  if (stack.perpBaseUrl) lines.push(`  perp API   ${stack.perpBaseUrl}/v4/public/trader   (OpenAPI: ${stack.perpBaseUrl}/openapi.json)`);
  lines.push(`  chain      ${stack.rpcUrl} (chain id ${config.chainId})`);
  lines.push(`  data       ${config.dataDir}${config.databaseUrl ? ' (database: PostgreSQL)' : ''}`);
  if (stack.demoFile) lines.push(`  demo.json  ${stack.demoFile}  (demo wallets and API keys)`);
  lines.push('  Ctrl-C to stop');
  process.stdout.write(lines.join('\n') + '\n');

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    stack
      .stop()
      .then(() => {
        logger.info('stopped');
        flushLogger(logger);
        process.exit(0);
      })
      .catch((err) => {
        logger.error({ err }, 'shutdown failed');
        flushLogger(logger);
        process.exit(1);
      });
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}
