/**
 * Signed perpetual orders end to end over HTTP, against the ceiling of EIP-712 signature recovery
 * alone on the same machine in the same run (the issue's target: at least 0.5 of it).
 *
 * The server is a child process: the perp API with a real engine behind it (sequencer journalling
 * to a fresh SQLite file with synchronous = FULL, the projector writing the history), production
 * logging. Each order goes through HMAC authentication, the typed message's checks, EIP-712
 * recovery, the nonce claim, admission and matching in the engine, the group-committed journal and
 * the answer. The parent pre-signs every order (the wallets' work, not the server's) and sends them
 * from BENCH_PERP_CONNECTIONS (default 32) connections; half the wallets sell and half buy around
 * one price, so about half the orders trade. The ceiling recovers the signer of the same signed
 * orders with viem, one after another, on one core.
 *
 *   npx tsx bench/perp-orders-bench.ts     (BENCH_PERP_ORDERS, BENCH_PERP_WALLETS, BENCH_PERP_CONNECTIONS)
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { recoverTypedDataAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { signPerp } from '../src/auth/hmac.ts';
import { orderType } from '../src/perp/order-typed-data.ts';
import { perpDomain } from '../src/perp/perp-key-service.ts';

const CHAIN_ID = 31337;
const VAULT = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const SYMBOL = 'AAPL-USD';

interface Ready {
  url: string;
  keys: Array<{ apiKey: string; apiSecret: string }>;
}

async function serve(addresses: string[]): Promise<void> {
  const { createApiKeyService } = await import('../src/auth/api-key-service.ts');
  const { createMemoryNonceStore } = await import('../src/auth/nonce-store.ts');
  const { createSecretBox } = await import('../src/auth/secret-box.ts');
  const { createLogger } = await import('../src/lib/logger.ts');
  const { buildPerpApi } = await import('../src/perp/perp-api.ts');
  const { indexedBlockInfo } = await import('../src/perp/perp-venue.ts');
  const { createPerpProjector } = await import('../src/perp/projection/perp-projector.ts');
  const { createInProcessGateway } = await import('../src/perp/sequencer/engine-gateway.ts');
  const { EngineSequencer } = await import('../src/perp/sequencer/engine-sequencer.ts');
  const { openDatabase } = await import('../src/storage/database.ts');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-perp-bench-'));
  const db = await openDatabase({ sqlitePath: path.join(dir, 'bench.sqlite') });
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'info' });
  const sequencer = new EngineSequencer({ db, logger });
  await sequencer.start();
  const gateway = createInProcessGateway(sequencer);
  const projector = createPerpProjector({ db, gateway, feeAccount: sequencer.engine.feeAccountAddress, logger });
  await projector.start();
  await gateway.submit({ kind: 'setMarkPrice', id: 'bench-mark', ts: Date.now(), symbol: SYMBOL, markPriceTicks: 20_000, indexPriceTicks: 20_000 });
  const keys = createApiKeyService({ db, secretBox: createSecretBox(randomBytes(32)), cacheTtlMs: 60_000 });
  const created: Ready['keys'] = [];
  for (const address of addresses) {
    await gateway.submit({ kind: 'deposit', id: `bench-dep-${address}`, ts: Date.now(), account: address.toLowerCase(), amount: 10_000_000n * 1_000_000n });
    const { key, apiSecret } = await keys.create({ api: 'perp', permissions: ['READ', 'TRADE'], ipWhitelist: [], chainId: CHAIN_ID, userAddress: address, label: 'bench' });
    created.push({ apiKey: key.apiKey, apiSecret });
  }
  const app = await buildPerpApi({
    chainId: CHAIN_ID, db, keys, nonces: createMemoryNonceStore(), rateLimit: { limit: 1_000_000_000 }, logger, bodyLimitBytes: 65_536,
    marginVault: VAULT, venue: { gateway, engine: () => sequencer.engine, blockInfo: () => indexedBlockInfo(db) },
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  process.send?.({ ready: true, url, keys: created });
  process.on('message', async (m: any) => {
    if (m === 'stop') {
      await app.close();
      await projector.stop();
      await sequencer.stop();
      await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    }
  });
}

export interface PerpOrdersBenchResult {
  orders: number;
  failures: number;
  seconds: number;
  perSec: number;
  recoverPerSec: number;
  ratio: number;
  table: string;
}

export async function runPerpOrdersBench(opts: { orders?: number; wallets?: number; connections?: number } = {}): Promise<PerpOrdersBenchResult> {
  const orders = opts.orders ?? Number(process.env.BENCH_PERP_ORDERS ?? 4_000);
  const walletCount = opts.wallets ?? Number(process.env.BENCH_PERP_WALLETS ?? 16);
  const connections = opts.connections ?? Number(process.env.BENCH_PERP_CONNECTIONS ?? 32);
  const wallets: PrivateKeyAccount[] = Array.from({ length: walletCount }, () => privateKeyToAccount(generatePrivateKey()));
  const child = fork(new URL(import.meta.url).pathname, ['server', ...wallets.map((w) => w.address)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`perp bench server exited with ${code}`)));
    child.on('message', (m: any) => m?.ready && resolve(m));
  });
  try {
    const domain = perpDomain(CHAIN_ID, VAULT);
    // Pre-signed: each order's signature is the wallet's work, done before the clock starts.
    const signed: Array<{ wallet: number; body: string; message: Record<string, unknown>; signature: `0x${string}` }> = [];
    const warm = Math.min(200, Math.floor(orders / 10));
    for (let i = 0; i < orders + warm; i++) {
      const w = i % walletCount;
      const sell = w % 2 === 0;
      const message = {
        account: wallets[w].address, symbol: SYMBOL, side: sell ? 'SELL' : 'BUY', orderType: 'LIMIT', size: '1',
        price: (200 + (sell ? -1 : 1) * ((i % 7) - 3) * 0.01).toFixed(2), timeInForce: 'GTC', reduceOnly: false, clientOrderId: '',
        nonce: String(i + 1), expiry: String(Date.now() + 3_600_000),
      };
      const typed = orderType.build(domain, message);
      const signature = await wallets[w].signTypedData(typed as never);
      signed.push({ wallet: w, message: typed.message, signature, body: JSON.stringify({ message: typed.message, signature }) });
    }
    const base = ready.url;
    const pathOf = '/v4/public/trader/orders';
    let failures = 0;
    const send = async (o: (typeof signed)[number]) => {
      const key = ready.keys[o.wallet];
      const ts = String(Date.now());
      const res = await fetch(base + pathOf, {
        method: 'POST',
        headers: {
          'content-type': 'application/json', 'X-Api-Key': key.apiKey, 'X-Api-Ts': ts, 'X-Chain-Id': String(CHAIN_ID),
          'X-Api-Sign': signPerp(key.apiSecret, { ts, method: 'POST', requestPath: pathOf, body: o.body }),
        },
        body: o.body,
      });
      const json = (await res.json()) as { code: number };
      if (json.code !== 0) failures++;
    };
    const run = async (list: typeof signed) => {
      let next = 0;
      const t0 = process.hrtime.bigint();
      await Promise.all(
        Array.from({ length: connections }, async () => {
          while (next < list.length) await send(list[next++]);
        }),
      );
      return Number(process.hrtime.bigint() - t0) / 1e9;
    };
    await run(signed.slice(0, warm));
    failures = 0;
    const seconds = await run(signed.slice(warm));
    const perSec = orders / seconds;

    // The ceiling: EIP-712 recovery of the same signed orders, one core.
    const types = orderType.build(domain, signed[0].message).types;
    const sample = signed.slice(warm, warm + Math.min(orders, 1_000));
    let best = 0;
    for (let round = 0; round < 3; round++) {
      const t0 = process.hrtime.bigint();
      for (const o of sample) {
        await recoverTypedDataAddress({ domain, types, primaryType: 'Order', message: orderType.parseMessage(o.message), signature: o.signature } as Parameters<typeof recoverTypedDataAddress>[0]);
      }
      best = Math.max(best, sample.length / (Number(process.hrtime.bigint() - t0) / 1e9));
    }
    const ratio = perSec / best;
    const table = [
      '| figure | value |',
      '| --- | ---: |',
      `| signed orders end to end over HTTP (${walletCount} wallets, ${connections} connections, ${orders} orders, ${failures} refused) | ${perSec.toFixed(0)}/s |`,
      `| EIP-712 signature recovery alone (viem, one core) | ${best.toFixed(0)}/s |`,
      `| ratio (target ≥ 0.5) | ${ratio.toFixed(3)} ${ratio >= 0.5 && failures === 0 ? 'met' : 'NOT met'} |`,
    ].join('\n');
    return { orders, failures, seconds, perSec, recoverPerSec: best, ratio, table };
  } finally {
    child.send('stop');
    await new Promise((r) => child.once('exit', r));
  }
}

if (process.argv[2] === 'server') {
  await serve(process.argv.slice(3));
} else if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const r = await runPerpOrdersBench();
  console.log(r.table);
}
