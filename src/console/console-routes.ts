/**
 * The web console (docs/console.md), served by the stock API's process at `/console`: a page, its
 * stylesheet and its script, `GET /console/config` (where both APIs and their streams are), and
 * `GET /console/demo` (demo.json's credentials, only to a loopback peer of a stack that runs its own
 * anvil). The page is a client like any other: it calls the public APIs and streams itself.
 *
 * These routes sit outside the stock API's authenticated scope and are hidden from its OpenAPI
 * document. Nothing here logs a credential.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import path from 'node:path';
import type { AppConfig } from '../config/app-config.ts';
import { NotFoundError } from '../errors/app-error.ts';
import { DEFAULT_INDEX_STALE_MS, DEFAULT_INSTRUMENTS } from '../perp/engine/instruments.ts';
import { STALE_QUOTE_MS } from '../stock/quote-view.ts';
import { stockOk } from '../stock/stock-envelope.ts';
import { consoleBundle } from './console-bundle.ts';
import { isLoopbackAddress, mayRevealDemoCredentials, runsOwnAnvil } from './demo-access.ts';
import { opsRoutes, type OpsRoutesOptions } from './ops-routes.ts';

const HTML = fs.readFileSync(fileURLToPath(new URL('./console-page.html', import.meta.url)), 'utf8');
const OPS_HTML = fs.readFileSync(fileURLToPath(new URL('./ops-page.html', import.meta.url)), 'utf8');
const CSS = fs.readFileSync(fileURLToPath(new URL('./console-page.css', import.meta.url)), 'utf8');

/** What the page needs to find the APIs; no secret. */
export interface ConsoleConfig {
  chainId: number;
  /**
   * `staleAfterMs`: a price whose own time has not advanced for this long is shown stale (the stock
   * API's quote age, EXECUTOR_QUOTE_MAX_AGE_MS; the perp index's `indexStaleMs`). `chains`: the
   * chains the stock API serves, the first (`chainId`) first; the page offers a choice of them when
   * there are several (docs/console.md, "Several chains").
   */
  stock: { baseUrl: string; wsUrl: string; product: string; symbols: string[]; staleAfterMs: number; chains: number[] };
  perp: { baseUrl: string; wsUrl: string; symbols: string[]; staleAfterMs: number; instruments: ConsoleInstrument[] } | null;
}

/** A perpetual market's steps: its prices are shown at the tick's places, its sizes at the lot's. */
export interface ConsoleInstrument {
  symbol: string;
  tickSize: string;
  lotSize: string;
}

/** demo.json's credentials as the page uses them. */
export interface ConsoleDemo {
  wallet: { address: string; privateKey: string };
  /**
   * The embedded anvil, for the wallet's own token approvals to the StockRouter (the deposit flow
   * of an order whose exchange balance is short); the contracts it approves and deposits.
   */
  rpcUrl: string;
  stock: { apiKey: string; apiSecret: string; userAddress: string; contracts: ConsoleStockContracts };
  /** Every chain's node and contracts (demo.json's `stock.chains`), the first's first: a chosen chain's approvals go to its own. */
  chains: Array<{ chainId: number; rpcUrl: string; contracts: ConsoleStockContracts }>;
  perp: { apiKey: string; apiSecret: string; address: string } | null;
}

type ConsoleStockContracts = { stockRouter: string; cashToken: string; stocks: Record<string, string> };

/** What the console needs of the stack (the stack's context fits it; the app layer passes it in). */
export interface ConsoleContext {
  config: Pick<AppConfig, 'dataDir' | 'rpcUrl' | 'demoMode' | 'stockApiPrefix' | 'chainId' | 'stockProduct'> & { executor?: Pick<AppConfig['executor'], 'quoteMaxAgeMs'> };
  endpoints: { perp?: { baseUrl: string } };
  symbols: ReadonlyArray<{ symbol: string }>;
  /** The stock API's other chains (those that started), after the first (`config.chainId`). */
  otherChains?: ReadonlyArray<{ config: { chainId: number } }>;
}

export interface ConsoleRoutesOptions {
  ctx: ConsoleContext;
  /** The operator page's stores (`/console/ops`); without them it is not served. */
  ops?: Omit<OpsRoutesOptions, 'page'>;
}

/** The part of demo.json (src/app/demo-file.ts, contract.md §0) the console reads. */
interface DemoFile {
  rpcUrl: string;
  wallets: Array<{ address: string; privateKey: string }>;
  stock: {
    keys: { writable: { apiKey: string; apiSecret: string; userAddress: string } };
    contracts: ConsoleStockContracts;
    chains?: Array<{ chainId: number; rpcUrl: string; contracts: ConsoleStockContracts }>;
  };
  perp?: { baseUrl: string; wsUrl: string; keys: { trader: { apiKey: string; apiSecret: string; address: string } } };
}

/** `http://host:port` as the browser reached us: the page then talks to the same host. */
function requestOrigin(req: FastifyRequest): { protocol: string; hostname: string; host: string; origin: string } {
  const host = req.headers.host ?? `127.0.0.1:${req.socket.localPort}`;
  const hostname = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0];
  const protocol = req.protocol === 'https' ? 'https' : 'http';
  return { protocol, hostname, host, origin: `${protocol}://${host}` };
}

/** demo.json, read per request: it is written after the roles have started, and may be rewritten. */
function readDemoFile(dataDir: string): DemoFile | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as DemoFile;
  } catch {
    return undefined;
  }
}

function demoAllowed(ctx: ConsoleRoutesOptions['ctx'], req: FastifyRequest): boolean {
  // The socket's peer, never req.ip: with TRUSTED_PROXIES that comes from X-Forwarded-For.
  return mayRevealDemoCredentials({ peerAddress: req.socket.remoteAddress, ownAnvil: runsOwnAnvil(ctx.config), demoMode: ctx.config.demoMode });
}

function consoleConfig(ctx: ConsoleRoutesOptions['ctx'], req: FastifyRequest): ConsoleConfig {
  const { protocol, hostname, host, origin } = requestOrigin(req);
  const ws = protocol === 'https' ? 'wss' : 'ws';
  const prefix = ctx.config.stockApiPrefix;
  const stockBase = origin + prefix;
  let perp: ConsoleConfig['perp'] = null;
  const perpSymbols = DEFAULT_INSTRUMENTS.map((i) => i.symbol);
  const instruments = DEFAULT_INSTRUMENTS.map(({ symbol, tickSize, lotSize }) => ({ symbol, tickSize, lotSize }));
  const local = ctx.endpoints.perp?.baseUrl;
  if (local) {
    // Same host as the page (it may be reached by another name than the listen address), perp's port.
    const port = new URL(local).port;
    const hostPort = `${hostname}${port ? `:${port}` : ''}`;
    perp = { baseUrl: `${protocol}://${hostPort}`, wsUrl: `${ws}://${hostPort}/v4/public/ws`, symbols: perpSymbols, staleAfterMs: DEFAULT_INDEX_STALE_MS, instruments };
  } else {
    const fromFile = readDemoFile(ctx.config.dataDir)?.perp;
    if (fromFile) perp = { baseUrl: fromFile.baseUrl, wsUrl: fromFile.wsUrl, symbols: perpSymbols, staleAfterMs: DEFAULT_INDEX_STALE_MS, instruments };
  }
  return {
    chainId: ctx.config.chainId,
    stock: {
      baseUrl: stockBase,
      wsUrl: `${ws}://${host}${prefix}/api/v1/ws`,
      product: ctx.config.stockProduct,
      symbols: ctx.symbols.map((s) => s.symbol),
      staleAfterMs: ctx.config.executor?.quoteMaxAgeMs ?? STALE_QUOTE_MS,
      chains: [ctx.config.chainId, ...(ctx.otherChains ?? []).map((c) => c.config.chainId)],
    },
    perp,
  };
}

/** demo.json's chains as the console uses them (a file written before chains were listed: its one chain). */
function demoChains(demo: DemoFile): ConsoleDemo['chains'] {
  const pick = ({ stockRouter, cashToken, stocks }: ConsoleStockContracts) => ({ stockRouter, cashToken, stocks });
  const chains = demo.stock.chains ?? [];
  if (chains.length === 0) return [];
  return chains.map((c) => ({ chainId: c.chainId, rpcUrl: c.rpcUrl, contracts: pick(c.contracts) }));
}

/**
 * The browser itself refuses anything but the stack's own origins: the page's script, style and
 * calls come from the stock API, its REST and stream calls go to the two APIs only.
 */
function contentSecurityPolicy(config: ConsoleConfig, rpcUrls: readonly string[] = []): string {
  const connect = ["'self'", config.stock.wsUrl];
  if (config.perp) connect.push(new URL(config.perp.baseUrl).origin, config.perp.wsUrl);
  // The embedded anvils (one per chain), only for the page that is handed the demo wallet (its approvals).
  for (const origin of new Set(rpcUrls.map((u) => new URL(u).origin))) connect.push(origin);
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `connect-src ${connect.join(' ')}`,
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function noStore(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store');
}

/** Registers the console's routes on the stock API's app (outside its authenticated scope). */
export async function consoleRoutes(app: FastifyInstance, opts: ConsoleRoutesOptions): Promise<void> {
  const { ctx } = opts;
  const hidden = { schema: { hide: true } };
  const rpcFor = (req: FastifyRequest): string[] => {
    const demo = demoAllowed(ctx, req) ? readDemoFile(ctx.config.dataDir) : undefined;
    return demo ? [demo.rpcUrl, ...demoChains(demo).map((c) => c.rpcUrl)] : [];
  };
  const page = async (req: FastifyRequest, reply: FastifyReply) =>
    noStore(reply).header('content-security-policy', contentSecurityPolicy(consoleConfig(ctx, req), rpcFor(req))).type('text/html; charset=utf-8').send(HTML);
  app.get('/console', hidden, page);
  app.get('/console/', hidden, page);
  app.get('/console/console.css', hidden, async (_req, reply) => noStore(reply).type('text/css; charset=utf-8').send(CSS));
  app.get('/console/console.js', hidden, async (_req, reply) => noStore(reply).type('text/javascript; charset=utf-8').send(await consoleBundle('console')));
  app.get('/console/ops.js', hidden, async (_req, reply) => noStore(reply).type('text/javascript; charset=utf-8').send(await consoleBundle('ops')));
  if (opts.ops) {
    await opsRoutes(app, {
      ...opts.ops,
      page: async (req, reply) =>
        noStore(reply).header('content-security-policy', contentSecurityPolicy(consoleConfig(ctx, req))).type('text/html; charset=utf-8').send(OPS_HTML),
    });
  }
  app.get('/console/config', hidden, async (req, reply) => noStore(reply).send(stockOk(req.id, consoleConfig(ctx, req))));
  app.get('/console/demo', hidden, async (req, reply) => {
    const demo = demoAllowed(ctx, req) ? readDemoFile(ctx.config.dataDir) : undefined;
    if (!demo) throw new NotFoundError('route');
    const { stockRouter, cashToken, stocks } = demo.stock.contracts;
    const body: ConsoleDemo = {
      wallet: { address: demo.wallets[0].address, privateKey: demo.wallets[0].privateKey },
      rpcUrl: demo.rpcUrl,
      stock: { ...demo.stock.keys.writable, contracts: { stockRouter, cashToken, stocks } },
      chains: demoChains(demo),
      perp: demo.perp ? { ...demo.perp.keys.trader } : null,
    };
    return noStore(reply).send(stockOk(req.id, body));
  });
}

export { isLoopbackAddress, mayRevealDemoCredentials, runsOwnAnvil };
