import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
import { loadConfig } from '/work/main/src/config/app-config.ts';
import { createLogger } from '/work/main/src/lib/logger.ts';
import { startStack } from '/work/main/src/app/stack.ts';
import { prepareOneClickUsers, measureOneClickSends } from '/work/main/bench/one-click-bench.ts';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'oc-trace-'));
const config = loadConfig({ ...process.env, DATA_DIR: dataDir, STOCK_API_PORT: '0', PERP_API_PORT: '0', HISTORY_DAYS: '1', LOG_LEVEL: 'warn' });
const stack = await startStack(config, { role: 'all', logger: createLogger({ level: 'warn' }) });
const users = await prepareOneClickUsers(stack, Number(process.env.U ?? 1));
const demo = stack.demo!;
for (const per of [5, Number(process.env.N ?? 30)]) {
  const r = await measureOneClickSends({ baseUrl: stack.stockBaseUrl!, chainId: demo.chainId, product: demo.stock.product, users, perUser: per });
  console.log(`${r.sends} sends in ${r.seconds.toFixed(2)}s = ${(r.sends / r.seconds).toFixed(1)}/s, latency ${(r.seconds * 1000 / per).toFixed(1)} ms`);
}
await stack.stop();
