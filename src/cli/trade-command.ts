/**
 * Trading from the terminal on the SDK (README "CLI trading"): `tokex stock …` (quotes, balances,
 * orders through One Click, cash in and out), `tokex perp …` (account, positions, signed orders,
 * collateral in and out) and `tokex stream …` (a book, trades or quotes live). Credentials come from
 * the running demo stack's demo.json unless given (`--url`, `--api-key`, `--api-secret`,
 * `--private-key` or TOKEX_PRIVATE_KEY); human tables by default, `--json` for machines, a progress
 * line on stderr while a settlement or a confirmation is awaited.
 */
import { ORDER_SIDES, STOCK_KLINE_INTERVALS, TIME_IN_FORCES, TRIGGER_BY, type OrderInput, type TimeInForce, type TriggerBy } from '@tokex/contract';
import { randomUUID } from 'node:crypto';
import { Command, Option } from 'commander';
import type { PerpClient, StockClient, StockOrderInput, StockOrderView, StreamClient } from '@tokex/sdk';
import { ValidationError } from '../errors/app-error.ts';
import { amount as shown, amounts, cellText, fields, print, readDemo, table, withProgress } from './cli-output.ts';

// The SDK and viem take a few hundred milliseconds to load: only an action that calls the API
// loads them, so building these commands (and `tokex stock --help`) stays instant.
const sdk = () => import('@tokex/sdk');
const viem = () => import('viem');

interface Common {
  json?: boolean;
  url?: string;
  apiKey?: string;
  apiSecret?: string;
  privateKey?: string;
  /** `--chain <id>` (stock commands): the chain whose venue answers (`x-api-chain-id`). */
  chain?: number;
}

const withCommon = (c: Command) =>
  c
    .option('--json', 'machine-readable output')
    .option('--url <url>', 'API base URL (default: demo.json)')
    .option('--api-key <key>', 'API key (default: the demo key)')
    .option('--api-secret <secret>', 'API secret (default: the demo key)')
    .option('--private-key <hex>', 'wallet key for signing (default: TOKEX_PRIVATE_KEY, else demo wallets[0])');

/** `--chain <id>`, checked to be a chain id; whether the stack serves it is demoChain's to say. */
const chainOption = (description: string) =>
  new Option('--chain <id>', description).argParser((v) => {
    if (!/^\d{1,15}$/.test(v.trim()) || Number(v) < 1) throw new ValidationError('--chain', `a chain id (a positive integer), not ${JSON.stringify(v)}`);
    return Number(v);
  });

/** The stock commands' `--chain <id>`: which of the chains the stock API serves answers. */
const withChain = (c: Command) =>
  withCommon(c).addOption(chainOption("the chain whose venue answers: x-api-chain-id, and that chain's node and contracts from demo.json (default: the first chain)"));

/** One chain of demo.json's `stock.chains`: its id, node and stock venue's contracts. */
export interface DemoChain {
  chainId: number;
  rpcUrl: string;
  contracts: { stockRouter: string; cashToken: string; [name: string]: unknown };
}

/**
 * The chain `--chain` names among those demo.json lists (`stock.chains`; a demo.json from before
 * several chains: its one top-level chain), the first when none is named. A chain the stack does
 * not serve is refused with the ones it does: a request for it would only get the opaque 401.
 */
export function demoChain(demo: any, chainId: number | undefined): DemoChain {
  const chains: DemoChain[] = Array.isArray(demo?.stock?.chains) && demo.stock.chains.length > 0
    ? demo.stock.chains
    : [{ chainId: demo.chainId, rpcUrl: demo.rpcUrl, contracts: demo.stock.contracts }];
  if (chainId === undefined) return chains[0];
  const found = chains.find((c) => c.chainId === chainId);
  if (!found) throw new ValidationError('--chain', `chain ${chainId} is not served by this stack; demo.json names ${chains.map((c) => c.chainId).join(', ')}`);
  return found;
}

async function stockClient(o: Common): Promise<StockClient> {
  const demo = o.url && o.apiKey && o.apiSecret ? undefined : readDemo();
  // With --url and the key given, no demo.json is read: the chain is --chain's, else CHAIN_ID's.
  const chainId = demo ? demoChain(demo, o.chain).chainId : (o.chain ?? Number(process.env.CHAIN_ID ?? 31337));
  const { StockClient } = await sdk();
  return new StockClient({
    baseUrl: o.url ?? demo.stock.baseUrl,
    apiKey: o.apiKey ?? demo.stock.keys.writable.apiKey,
    apiSecret: o.apiSecret ?? demo.stock.keys.writable.apiSecret,
    chainId,
    product: demo?.stock.product ?? process.env.STOCK_PRODUCT ?? 'STOCK',
  });
}

async function perpClient(o: Common): Promise<PerpClient> {
  const demo = o.url && o.apiKey && o.apiSecret ? undefined : readDemo();
  const { PerpClient } = await sdk();
  return new PerpClient({
    baseUrl: o.url ?? demo.perp.baseUrl,
    apiKey: o.apiKey ?? demo.perp.keys.trader.apiKey,
    apiSecret: o.apiSecret ?? demo.perp.keys.trader.apiSecret,
    chainId: demo?.chainId ?? Number(process.env.CHAIN_ID ?? 31337),
  });
}

async function wallet(o: Common) {
  const key = o.privateKey ?? process.env.TOKEX_PRIVATE_KEY ?? readDemo().wallets[0].privateKey;
  const { privateKeyToAccount } = await import('viem/accounts');
  return privateKeyToAccount(key as `0x${string}`);
}

const deadline = () => Math.floor(Date.now() / 1000) + 600;

/**
 * A refusal that names a symbol the venue does not list, with the symbols it does list (and, for
 * CCXT's spelling `BTC/USD`, the venue's `BTC-USD`); any other error as it came.
 */
export async function withListedSymbols(err: unknown, listed: () => Promise<string[]>): Promise<unknown> {
  if (!(err instanceof Error) || !/not listed|unknown symbol/i.test(err.message)) return err;
  let names: string[];
  try {
    names = await listed();
  } catch {
    return err;
  }
  const e = new Error(`${err.message}; listed: ${names.join(', ')}`);
  e.name = err.name;
  return e;
}

/** CCXT writes a perpetual `BTC/USD` (or `BTC/USD:USD`); this venue's symbols are `BTC-USD`. */
export function perpSymbolHint(symbol: string): string | undefined {
  const m = /^([A-Za-z0-9]+)\/([A-Za-z0-9]+)(?::[A-Za-z0-9]+)?$/.exec(symbol);
  return m ? `${symbol} is CCXT's spelling: this venue's symbol is ${m[1].toUpperCase()}-${m[2].toUpperCase()}` : undefined;
}

async function stockSymbols(c: StockClient): Promise<string[]> {
  return (await c.getSymbols()).map((x) => x.symbol);
}

async function perpSymbols(c: PerpClient): Promise<string[]> {
  return (await c.getInstruments()).map((x) => x.symbol);
}

const PERP_USD_FIELDS = ['balance', 'equity', 'unrealisedPnl', 'freeCollateral', 'withdrawable', 'pendingWithdrawals', 'orderMargin', 'positionMargin', 'maintenanceMargin', 'deposited', 'withdrawn', 'realisedPnl', 'fees', 'fee', 'funding', 'price', 'avgPrice', 'triggerPrice', 'entryPrice', 'markPrice', 'liquidationPrice', 'amount', 'notional'];
/**
 * A perpetual answer (account, order, position, withdrawal, deposit) with its USD amounts at display
 * precision, nested rows too (an order's `fills`). Sizes stay as answered: the instrument's lot,
 * already short.
 */
export function perpDisplay(r: Record<string, unknown>): Record<string, unknown> {
  const out = amounts(r, 'USD', PERP_USD_FIELDS);
  for (const [k, v] of Object.entries(out)) {
    if (Array.isArray(v)) out[k] = v.map((x) => (x !== null && typeof x === 'object' && !Array.isArray(x) ? perpDisplay(x as Record<string, unknown>) : x));
  }
  return out;
}

/** `fn`, its not-listed refusal completed with what is listed. */
async function listing<T>(fn: () => Promise<T>, listed: () => Promise<string[]>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw await withListedSymbols(err, listed);
  }
}

/** How long a command waits for a settlement, a payment or a credit before it gives up (`--timeout`). */
const WAIT_MS = 120_000;

/**
 * Exit codes of a command that waits (README "CLI trading"): 0 when what it waited for happened,
 * 1 when it failed (an order REJECTED or EXPIRED, a transfer FAILED: the reason on stderr), and 124,
 * as timeout(1) answers, when the wait ran out first: the outcome is not known and may still come.
 */
export const EXIT_FAILED = 1;
export const EXIT_STILL_WAITING = 124;

const timeoutOption = () =>
  new Option('--timeout <seconds>', `how long to wait (default ${WAIT_MS / 1000})`).argParser((v) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new ValidationError('--timeout', 'a number of seconds above zero');
    return n * 1000;
  });

/** The outcome waited for did not come: why on stderr (after the answer on stdout), and a non-zero exit. */
function failed(message: string, code = EXIT_FAILED): void {
  process.stderr.write(`error: ${message}\n`);
  process.exitCode = code;
}

/**
 * Waits with the progress line. A wait that runs out says what is still awaited and in which state,
 * exit code 124, instead of a stack trace; the answer is undefined then.
 */
async function waitFor<T>(label: string, what: () => string, timeoutMs: number, wait: (onWait: (state: string) => void) => Promise<T>): Promise<T | undefined> {
  try {
    return await withProgress(label, wait);
  } catch (err) {
    if (!(err instanceof Error && err.name === 'TokexTimeoutError')) throw err;
    const state = (err as Error & { lastState?: string }).lastState ?? 'pending';
    failed(`${what()} is still ${state} after ${timeoutMs / 1000} s; it may still complete`, EXIT_STILL_WAITING);
    return undefined;
  }
}

/**
 * Why a stock order that ended is not what the command waited for, or undefined: REJECTED or EXPIRED
 * (with the venue's reason), CANCELED by someone else, or FILLED before a cancel took effect.
 */
export function stockOrderFailure(x: StockOrderView, expected: 'done' | 'canceled'): string | undefined {
  const status = x.history?.status;
  if (status === undefined) return undefined;
  if (status === 'REJECTED' || status === 'EXPIRED') return `order ${x.orderId} ${status}: ${x.history?.reason ?? 'no reason given'}`;
  if (expected === 'canceled' && status !== 'CANCELED') return `order ${x.orderId} ended ${status}, not canceled`;
  if (expected === 'done' && status === 'CANCELED') return `order ${x.orderId} CANCELED before it filled`;
  return undefined;
}

/** A stock order as a person reads it; `cancel` shows the cancel's transaction rather than the placement's. */
function orderFields(x: StockOrderView, answering: 'place' | 'cancel' = 'place'): string {
  const filled = x.history?.filledQuantity ?? x.openOrder?.filledQuantity;
  return fields({
    orderId: x.orderId, symbol: x.symbol, side: x.side, type: x.type, state: x.state,
    status: x.history?.status ?? x.openOrder?.status, filled: shown(filled, x.symbol ?? ''), avgPrice: shown(x.history?.averagePrice, 'USD'),
    ...(answering === 'cancel' ? { cancelTxHash: x.cancelTxHash } : { txHash: x.txHash }),
    ...(x.history?.reason ? { reason: x.history.reason } : {}),
  });
}

/** The options of `tokex perp order`. */
export interface PerpOrderOptions {
  price?: string;
  tif?: TimeInForce;
  reduceOnly?: boolean;
  clientId?: string;
  stop?: string;
  takeProfit?: string;
  triggerBy?: TriggerBy;
  closePosition?: boolean;
}

/**
 * The order `tokex perp order <side> <symbol> [size]` builds: LIMIT with --price, else MARKET; with
 * --stop or --take-profit the trigger type of the same kind (STOP_LIMIT with --price, STOP_MARKET
 * without; TAKE_PROFIT_* likewise) at that trigger price; --close-position (a trigger only) closes
 * the whole position when it fires, so no size. What only the API can judge is left to it.
 */
export function perpOrderInput(side: string, symbol: string, size: string | undefined, o: PerpOrderOptions): OrderInput {
  const hint = perpSymbolHint(symbol);
  if (hint !== undefined) throw new ValidationError('symbol', hint);
  const s = side.toUpperCase();
  if (s !== 'BUY' && s !== 'SELL') throw new ValidationError('side', `must be ${ORDER_SIDES.join(' or ')}, not ${JSON.stringify(side)}`);
  if (o.stop !== undefined && o.takeProfit !== undefined) throw new ValidationError('--stop', 'give --stop or --take-profit, not both');
  const triggerPrice = o.stop ?? o.takeProfit;
  if (triggerPrice === undefined) {
    if (o.triggerBy !== undefined) throw new ValidationError('--trigger-by', 'only with --stop or --take-profit');
    if (o.closePosition) throw new ValidationError('--close-position', 'only with --stop or --take-profit (to close at market now: the opposite side, the size and --reduce-only)');
  }
  if (o.closePosition && size !== undefined) throw new ValidationError('size', 'omit it with --close-position: the whole position is closed');
  if (!o.closePosition && size === undefined) throw new ValidationError('size', 'required (or --close-position with --stop or --take-profit)');
  const kind = o.price !== undefined ? 'LIMIT' : 'MARKET';
  const type = o.stop !== undefined ? (`STOP_${kind}` as const) : o.takeProfit !== undefined ? (`TAKE_PROFIT_${kind}` as const) : kind;
  return {
    symbol, side: s, type,
    ...(size !== undefined ? { size } : {}),
    ...(o.price !== undefined ? { price: o.price } : {}),
    ...(triggerPrice !== undefined ? { triggerPrice } : {}),
    ...(o.triggerBy !== undefined ? { triggerBy: o.triggerBy } : {}),
    ...(o.closePosition ? { closePosition: true } : {}),
    ...(o.tif ? { timeInForce: o.tif } : {}),
    ...(o.reduceOnly ? { reduceOnly: true } : {}),
    clientOrderId: o.clientId ?? `cli-${randomUUID().slice(0, 8)}`,
  };
}

function stockCommand(): Command {
  const stock = new Command('stock').description('the tokenized-stock API: quotes, balances, orders, cash');
  withChain(stock.command('quote').argument('<symbols...>').description('current quotes')).action(async (symbols: string[], o: Common) => {
    const c = await stockClient(o);
    const rows = await listing(() => Promise.all(symbols.map((s) => c.get<Record<string, unknown>>(`/api/v1/prices/${s}`))), () => stockSymbols(c));
    // A stale quote (the market data stopped) says so beside the market's status.
    print(o, rows, () => table(rows.map((q) => ({ symbol: q.symbol, bid: q.bid, ask: q.ask, last: q.last, market: q.stale === true ? `${q.marketStatus} (stale)` : q.marketStatus, time: new Date(Number(q.timestamp)).toISOString() }))));
  });
  withChain(stock.command('balance').description("the key's wallet balances").option('--user <address>', 'another wallet')).action(async (o: Common & { user?: string }) => {
    const c = await stockClient(o);
    const user = o.user ?? readDemo().stock.keys.writable.userAddress;
    const b = await c.get<any>(`/api/v1/users/${user}/balance`);
    // tokenBalances lists the stocks, then the cash tokens (isStock false, nothing at the exchange).
    // Amounts at each token's display precision, truncated (never shown larger than they are).
    const tokens = (b.tokenBalances as Record<string, unknown>[]).map((t) => amounts(t, String(t.symbol), ['walletBalance', 'exchangeBalance', 'lockedExchangeBalance']));
    print(o, b, () => `mUSD available ${shown(b.mUsdDetail.available, 'mUSD')}, locked ${shown(b.mUsdDetail.locked, 'mUSD')}\n\n${table(tokens, ['symbol', 'walletBalance', 'exchangeBalance', 'lockedExchangeBalance'])}`);
  });
  withChain(stock.command('orders').description('orders of the key').addOption(new Option('--state <state>').choices(['open', 'history']))).action(async (o: Common & { state?: string }) => {
    const r = await (await stockClient(o)).get<{ total: number; rows: any[] }>('/api/v1/orders', o.state ? { state: o.state } : {});
    print(o, r, () => table(r.rows.map((x) => ({ orderId: x.orderId, symbol: x.symbol, side: x.side, type: x.type, state: x.state, quantity: shown(x.quantity, x.symbol), notional: shown(x.notional, 'mUSD'), price: shown(x.price, 'USD'), createdAt: x.createdAt }))));
  });
  for (const side of ['buy', 'sell'] as const) {
    withChain(
      stock
        .command(side)
        .argument('<symbol>')
        .description(`${side} through One Click (enable it once with \`tokex stock oneclick\`), waiting for the settlement`)
        .option('--quantity <q>', 'shares (a sell, or a limit buy)')
        .option('--notional <usd>', 'mUSD to spend (a market buy)')
        .option('--price <p>', 'limit price (a DAY limit order: waits until it rests)')
        .option('--no-wait', 'answer once sent, without waiting for the order')
        .addOption(timeoutOption()),
    ).action(async (symbol: string, o: Common & { quantity?: string; notional?: string; price?: string; wait: boolean; timeout?: number }) => {
      const c = await stockClient(o);
      const order: StockOrderInput = {
        symbol, side: side === 'buy' ? 'Buy' : 'Sell', type: o.price ? 'Limit' : 'Market', deadline: deadline(),
        ...(o.quantity ? { quantity: o.quantity } : {}), ...(o.notional ? { notional: o.notional } : {}), ...(o.price ? { price: o.price, timeInForce: 'DAY' as const } : {}),
      };
      if (!o.wait) {
        const sent = await c.sendOrder(order);
        print(o, sent, () => fields(sent as unknown as Record<string, unknown>));
        return;
      }
      const { pollUntil } = await sdk();
      const timeoutMs = o.timeout ?? WAIT_MS;
      const sent = await listing(() => c.sendOrder(order), () => stockSymbols(c));
      const orderId = sent.orderId ?? sent.orderIds?.[0];
      if (!orderId) {
        failed(`send ${sent.requestId} is ${sent.status} without an order id yet; \`tokex stock orders\` lists the order once placed`, EXIT_STILL_WAITING);
        return;
      }
      // A limit order is answered once it rests; a market order once it is settled.
      const done = (v: StockOrderView) => v.state === 'history' || (o.price !== undefined && v.state === 'open');
      const x = await waitFor(`${side} ${symbol}`, () => `order ${orderId}`, timeoutMs, (onWait) => pollUntil(() => c.getOrder(orderId), done, { timeoutMs, onWait }));
      if (x === undefined) return;
      print(o, x, () => orderFields(x));
      const failure = stockOrderFailure(x, 'done');
      if (failure !== undefined) failed(failure);
    });
  }
  withChain(stock.command('cancel').argument('<orderId>').description('cancel an open order through One Click, waiting until it is cancelled').addOption(timeoutOption())).action(async (orderId: string, o: Common & { timeout?: number }) => {
    const c = await stockClient(o);
    const { oneClickCancel } = await sdk();
    const timeoutMs = o.timeout ?? WAIT_MS;
    const x = await waitFor(`cancel ${orderId}`, () => `order ${orderId}`, timeoutMs, (onWait) => oneClickCancel(c, orderId, { timeoutMs, onWait }));
    if (x === undefined) return;
    print(o, x, () => orderFields(x, 'cancel'));
    const failure = stockOrderFailure(x, 'canceled');
    if (failure !== undefined) failed(failure);
  });
  for (const dir of ['deposit', 'withdraw'] as const) {
    withChain(stock.command(dir).argument('<amount>').description(`${dir} cash (the demo USDC) through One Click, waiting until completed`).addOption(timeoutOption())).action(async (amount: string, o: Common & { timeout?: number }) => {
      const c = await stockClient(o);
      const input = { tokenAddress: demoChain(readDemo(), o.chain).contracts.cashToken, tokenAmount: amount };
      const { oneClickOperation } = await sdk();
      const timeoutMs = o.timeout ?? WAIT_MS;
      const op = await waitFor(dir, () => `the ${dir} of ${amount}`, timeoutMs, (onWait) => oneClickOperation(c, dir === 'deposit' ? 'cashDeposit' : 'cashWithdrawal', input, { timeoutMs, onWait }));
      if (op === undefined) return;
      print(o, op, () => fields({ operationId: op.operationId, status: op.operationStatus, amount: shown(op.tokenAmount, 'USDC'), mUsd: shown(op.mUsdAmount, 'mUSD'), txHash: op.txHash }));
      if (op.operationStatus === 'failed') failed(`${dir} ${op.operationId} failed (transaction ${op.txHash})`);
    });
  }
  withChain(
    stock
      .command('oneclick')
      .description("enable One Click for the key's wallet: one EIP-712 signature, and the wallet's one approval of the cash token to the router (for deposits) when it has none")
      .option('--rpc-url <url>', 'the chain, for the approval (default: demo.json)'),
  ).action(async (o: Common & { rpcUrl?: string }) => {
    const c = await stockClient(o);
    const account = await wallet(o);
    // The approval is made on the chain the key's delegation is for, to that chain's router.
    const venue = demoChain(readDemo(), o.chain);
    const rpcUrl: string = o.rpcUrl ?? venue.rpcUrl;
    const chain = { id: venue.chainId, name: 'tokex', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpcUrl] } } };
    const [{ ensureAllowance }, { createPublicClient, createWalletClient, http }] = await Promise.all([sdk(), viem()]);
    const approveTx = await ensureAllowance(
      createWalletClient({ account, chain, transport: http(rpcUrl) }),
      createPublicClient({ chain, transport: http(rpcUrl) }),
      venue.contracts.cashToken as `0x${string}`,
      venue.contracts.stockRouter as `0x${string}`,
      '1000000',
    );
    const r = await c.enableOneClick(account);
    const out = { ...r, approveTxHash: approveTx ?? null };
    print(o, out, () => fields(out as unknown as Record<string, unknown>));
  });
  return stock;
}

function perpCommand(): Command {
  const perp = new Command('perp').description('the perpetual API: account, positions, signed orders, collateral');
  withCommon(perp.command('account').description('balance, equity, margin')).action(async (o: Common) => {
    const a = await (await perpClient(o)).get<Record<string, unknown>>('account');
    print(o, a, () => fields(perpDisplay(a)));
  });
  withCommon(perp.command('positions').description('open positions')).action(async (o: Common) => {
    const r = await (await perpClient(o)).get<{ rows: any[] }>('positions');
    print(o, r, () => table(r.rows.map(perpDisplay), ['symbol', 'side', 'size', 'entryPrice', 'markPrice', 'unrealisedPnl', 'leverage', 'liquidationPrice']));
  });
  withCommon(perp.command('orders').description('open orders (waiting stop and take-profit triggers are UNTRIGGERED)')).action(async (o: Common) => {
    const r = await (await perpClient(o)).get<{ rows: any[] }>('orders/open');
    print(o, r, () => table(r.rows.map(perpDisplay), ['orderId', 'symbol', 'side', 'type', 'price', 'triggerPrice', 'size', 'filledSize', 'status', 'createdAt', 'updatedAt']));
  });
  withCommon(
    perp
      .command('order')
      .argument('<side>', 'BUY or SELL')
      .argument('<symbol>', 'e.g. BTC-USD')
      .argument('[size]', 'base units (omitted with --close-position)')
      .description('a signed order: limit with --price, otherwise market; a stop or take-profit trigger with --stop or --take-profit')
      .option('--price <p>', 'limit price (with --stop or --take-profit: the limit the trigger enters the book at)')
      .option('--stop <triggerPrice>', 'a stop: STOP_MARKET, or STOP_LIMIT with --price; waits UNTRIGGERED until the price reaches it')
      .option('--take-profit <triggerPrice>', 'a take-profit: TAKE_PROFIT_MARKET, or TAKE_PROFIT_LIMIT with --price')
      .addOption(new Option('--trigger-by <price>', 'the price a trigger watches (default MARK)').choices(TRIGGER_BY))
      .option('--close-position', 'a trigger that closes the whole position when it fires (no size)')
      .addOption(new Option('--tif <tif>').choices(TIME_IN_FORCES))
      .option('--reduce-only')
      .option('--client-id <id>', 'clientOrderId: the same id again answers the first order (default: a new one)'),
  ).action(async (side: string, symbol: string, size: string | undefined, o: Common & PerpOrderOptions) => {
    const input = perpOrderInput(side, symbol, size, o);
    const c = await perpClient(o);
    const r = await listing(async () => c.placeOrder<Record<string, unknown>>(await wallet(o), input), () => perpSymbols(c));
    print(o, r, () => fields(perpDisplay(r)));
    // The engine answers at once. An order that ended without a fill (cancelled by self-trade
    // prevention, an IOC remainder) did nothing: the reason, and a failure. A partial fill did trade.
    if ((r.status === 'CANCELED' || r.status === 'EXPIRED') && !/[1-9]/.test(String(r.filledSize ?? '0'))) {
      failed(`order ${String(r.orderId)} ${String(r.status)} without a fill: ${String(r.reason ?? 'no reason given')}`);
    }
  });
  withCommon(perp.command('cancel').argument('<orderId>').description('cancel an open order')).action(async (orderId: string, o: Common) => {
    const r = await (await perpClient(o)).delete<Record<string, unknown>>(`orders/${orderId}`);
    print(o, r, () => fields(perpDisplay(r)));
  });
  withCommon(
    perp
      .command('amend')
      .argument('<orderId>')
      .description('a new price and/or size for an open order, signed by the wallet (same order id; a smaller size at the same price keeps its place)')
      .option('--price <p>', 'the new limit price')
      .option('--size <s>', 'the new total size, fills included'),
  ).action(async (orderId: string, o: Common & { price?: string; size?: string }) => {
    const r = await (await perpClient(o)).amendOrder<Record<string, unknown>>(await wallet(o), {
      orderId, ...(o.price !== undefined ? { price: o.price } : {}), ...(o.size !== undefined ? { size: o.size } : {}),
    });
    print(o, r, () => fields(perpDisplay(r)));
  });
  withCommon(
    perp
      .command('order-status')
      .argument('[orderId]')
      .description('one order in any state (UNTRIGGERED, open or done), by id or by --client-id')
      .option('--client-id <id>', 'the clientOrderId the order was placed with'),
  ).action(async (orderId: string | undefined, o: Common & { clientId?: string }) => {
    if ((orderId === undefined) === (o.clientId === undefined)) throw new ValidationError('orderId', 'give an order id or --client-id, one of them');
    const c = await perpClient(o);
    const r = orderId !== undefined ? await c.getOrder<Record<string, unknown>>(orderId) : await c.getOrderByClientId<Record<string, unknown>>(o.clientId!);
    print(o, r, () => fields(perpDisplay(r)));
  });
  withCommon(
    perp
      .command('withdraw')
      .argument('<amount>')
      .description("withdraw collateral to the wallet, which signs the withdrawal (the vault pays only the wallet's signature), waiting until paid on chain")
      .option('--client-id <id>', 'clientWithdrawalId: the same id again answers the first request (default: a new one)')
      .addOption(timeoutOption()),
  ).action(async (amount: string, o: Common & { clientId?: string; timeout?: number }) => {
    const c = await perpClient(o);
    const id = o.clientId ?? `cli-${randomUUID()}`;
    await c.withdraw(await wallet(o), { amount, clientWithdrawalId: id });
    const timeoutMs = o.timeout ?? WAIT_MS;
    const w = await waitFor(`withdrawal ${id}`, () => `withdrawal ${id}`, timeoutMs, (onWait) => c.waitForWithdrawal(id, { timeoutMs, onWait }));
    if (w === undefined) return;
    print(o, w, () => fields(perpDisplay(w as unknown as Record<string, unknown>)));
    if (w.status === 'FAILED') failed(`withdrawal ${id} FAILED: ${w.reason ?? 'no reason given'}`);
  });
  withCommon(perp.command('deposit').argument('<amount>').description('approve and deposit collateral into the margin vault from the wallet, waiting until credited').addOption(timeoutOption())).action(async (amount: string, o: Common & { timeout?: number }) => {
    const c = await perpClient(o);
    const account = await wallet(o);
    const timeoutMs = o.timeout ?? WAIT_MS;
    const tx = await waitFor('deposit', () => `the deposit of ${amount}`, timeoutMs, (onWait) => c.depositCollateral(account, amount, { timeoutMs, onWait }));
    if (tx === undefined) return;
    const credited = (await c.listDeposits({ limit: 100 })).rows.find((d) => d.txHash.toLowerCase() === tx.txHash.toLowerCase());
    print(o, credited ?? tx, () => fields(perpDisplay((credited ?? tx) as unknown as Record<string, unknown>)));
  });
  return perp;
}

/** The options of a `tokex stream …` command. */
interface StreamOptions {
  url?: string;
  json?: boolean;
  /** The stock API's streams rather than the perpetual API's. */
  stock?: boolean;
  /** Stock only: the chain whose channels the connection reads (docs/streams.md "Several chains (stock)"). */
  chain?: number;
  apiKey?: string;
  apiSecret?: string;
}

const STREAM_CHAIN = "stock streams: the chain whose channels are read (the URL's ?chainId= and the auth frame's), one demo.json names (default: the first chain)";

/**
 * A stream frame's data as one line: an array snapshot oldest first (the venue sends the newest
 * first), a null snapshot (a wallet not read yet) as nothing.
 */
function frameItems(data: unknown): unknown[] {
  return (Array.isArray(data) ? [...data].reverse() : [data]).filter((d) => d !== null && d !== undefined);
}

/** One stock balance as a line: the mUSD, then each token held (in the wallet, at the exchange), at display precision. */
function balanceLine(b: any): string {
  const held = (b.tokenBalances as Array<Record<string, unknown>>)
    .filter((t) => /[1-9]/.test(String(t.walletBalance ?? '')) || /[1-9]/.test(String(t.exchangeBalance ?? '')))
    .map((t) => `${String(t.symbol)} wallet ${String(shown(t.walletBalance, String(t.symbol)))} exchange ${String(shown(t.exchangeBalance, String(t.symbol)))}`);
  return [`mUSD available ${String(shown(b.mUsdDetail?.available, 'mUSD'))} locked ${String(shown(b.mUsdDetail?.locked, 'mUSD'))}`, ...held].join(', ');
}

function streamCommand(): Command {
  const stream = new Command('stream').description('a stream live in the terminal (Ctrl-C to stop); the stock streams take --chain <id>');
  const streams = async (o: StreamOptions, credentials = false): Promise<StreamClient> => {
    if (!o.stock) {
      // The perpetual venue is the first chain's only (docs/deployment.md "Several chains").
      if (o.chain !== undefined) throw new ValidationError('--chain', "the perpetual streams are the first chain's; --chain is for the stock streams (--stock)");
      const url = o.url ?? readDemo().perp.wsUrl;
      const { PerpStreamClient } = await sdk();
      return new PerpStreamClient({ url });
    }
    // As the stock commands: demo.json is read unless --url (and, for a private channel, the key) are given.
    const demo = o.url && (!credentials || (o.apiKey && o.apiSecret)) ? undefined : readDemo();
    // --chain as the stock commands take it: a chain demo.json does not name is refused with the
    // ones it does (the server would only refuse the upgrade, which the client retries). Without
    // --chain none is named: the first chain, as before several chains.
    const chainId = o.chain === undefined ? undefined : demo ? demoChain(demo, o.chain).chainId : o.chain;
    const { StockStreamClient } = await sdk();
    return new StockStreamClient({
      url: o.url ?? demo.stock.wsUrl,
      ...(chainId !== undefined ? { chainId } : {}),
      ...(credentials ? { apiKey: o.apiKey ?? demo.stock.keys.writable.apiKey, apiSecret: o.apiSecret ?? demo.stock.keys.writable.apiSecret } : {}),
    });
  };
  /** Prints each item of `channel`'s snapshot and updates as `line` gives it (one JSON line each with --json). */
  const follow = (client: StreamClient, channel: string, symbol: string | undefined, o: StreamOptions, line: (d: any) => string) => {
    const write = (d: unknown) => process.stdout.write(`${o.json ? JSON.stringify(d) : line(d)}\n`);
    const handlers = {
      onSnapshot(data: unknown) {
        for (const d of frameItems(data)) write(d);
      },
      onUpdate(d: unknown) {
        if (d !== null && d !== undefined) write(d);
      },
      onError(err: Error) {
        process.stderr.write(`error: ${err.message}\n`);
        process.exitCode = 1;
        void client.close();
      },
    };
    if (symbol !== undefined) client.subscribe(channel, { symbol }, handlers);
    else client.subscribe(channel, {}, handlers);
  };
  stream
    .command('book')
    .argument('<symbol>', 'a perpetual, e.g. BTC-USD')
    .description("a perpetual's order book (the perpetual API: the first chain's)")
    .option('--url <ws url>')
    .option('--levels <n>', 'levels a side', '10')
    .option('--json', 'one JSON line per frame')
    .action(async (symbol: string, o: { url?: string; levels: string; json?: boolean }) => {
      const client = await streams(o);
      const bids = new Map<string, string>();
      const asks = new Map<string, string>();
      const apply = (side: Map<string, string>, levels: string[][]) => {
        for (const [p, s] of levels) if (/[1-9]/.test(s)) side.set(p, s); else side.delete(p);
      };
      const render = (seq: number) => {
        if (o.json) return;
        const n = Number(o.levels);
        const sorted = (m: Map<string, string>, desc: boolean) => [...m].sort((a, b) => (desc ? Number(b[0]) - Number(a[0]) : Number(a[0]) - Number(b[0]))).slice(0, n);
        const rows = [...sorted(asks, false).reverse().map(([p, s]) => `        ${p.padStart(14)}  ${s}`), '  ----', ...sorted(bids, true).map(([p, s]) => `${s.padStart(12)}  ${p.padStart(14)}`)];
        process.stdout.write(`\x1b[2J\x1b[H${symbol}  seq ${seq}\n${rows.join('\n')}\n`);
      };
      client.subscribe('depth', { symbol }, {
        onSnapshot(data: any, seq: number) {
          bids.clear();
          asks.clear();
          apply(bids, data.bids);
          apply(asks, data.asks);
          if (o.json) process.stdout.write(`${JSON.stringify({ type: 'snapshot', seq, data })}\n`);
          render(seq);
        },
        onUpdate(data: any, seq: number) {
          apply(bids, data.bids);
          apply(asks, data.asks);
          if (o.json) process.stdout.write(`${JSON.stringify({ type: 'update', seq, data })}\n`);
          render(seq);
        },
        onError(err: Error) {
          process.stderr.write(`error: ${err.message}\n`);
          process.exitCode = 1;
          void client.close();
        },
      });
    });
  for (const [name, channel] of [['trades', 'trades'], ['quotes', 'quotes']] as const) {
    stream
      .command(name)
      .argument('<symbol>')
      .description(name === 'trades' ? "a perpetual's trades" : "a stock's quote at each tick")
      .option('--url <ws url>')
      .option('--stock', 'the stock API (default for quotes)')
      .addOption(chainOption(STREAM_CHAIN))
      .option('--json', 'one JSON line per frame')
      .action(async (symbol: string, o: StreamOptions) => {
        const client = await streams({ ...o, stock: o.stock || name === 'quotes' });
        follow(client, channel, symbol, o, (d) =>
          name === 'trades' ? `${new Date(d.ts).toISOString()}  ${d.side.padEnd(4)}  ${d.size.padStart(10)} @ ${d.price}` : `${new Date(d.timestamp).toISOString()}  bid ${d.bid}  ask ${d.ask}  last ${d.last}${d.stale === true ? '  stale' : ''}`,
        );
      });
  }
  stream
    .command('candles')
    .argument('<symbol>', 'a stock, e.g. AAPL')
    .description("a stock's latest candle, each time it changes")
    .addOption(new Option('--interval <i>').choices(STOCK_KLINE_INTERVALS).default('1m'))
    .option('--url <ws url>')
    .addOption(chainOption(STREAM_CHAIN))
    .option('--json', 'one JSON line per frame')
    .action(async (symbol: string, o: StreamOptions & { interval: string }) => {
      const client = await streams({ ...o, stock: true });
      follow(client, `klines:${o.interval}`, symbol, o, (d) => `${new Date(d.openTime).toISOString()}  open ${d.exact?.open ?? d.open}  high ${d.exact?.high ?? d.high}  low ${d.exact?.low ?? d.low}  close ${d.exact?.close ?? d.close}  volume ${d.exact?.volume ?? d.volume}`);
    });
  // The stock private channels: the key's wallet's, on the chain --chain names (its key needs a scope there).
  const privateLines: Record<'orders' | 'operations' | 'balances', [string, (d: any) => string]> = {
    orders: ["the key's open orders, then each order at each indexed change", (d) => `${cellText('updatedAt', d.updatedAt ?? d.createdAt)}  ${d.orderId}  ${d.side} ${d.type} ${d.symbol}  ${d.state} ${d.history?.status ?? d.openOrder?.status ?? ''}  ${d.txHash ?? ''}`],
    operations: ["the key's last operations, then each at each indexed change", (d) => `${cellText('updatedAt', d.updatedAt ?? d.createdAt)}  ${d.operationId}  ${d.kind} ${d.operationStatus}  ${d.tokenAmount ?? ''} ${d.tokenSymbol ?? d.symbol ?? ''}  ${d.txHash ?? ''}`],
    balances: ["the key's wallet's balances, then after each of its orders or operations", balanceLine],
  };
  for (const [name, [description, line]] of Object.entries(privateLines)) {
    stream
      .command(name)
      .description(`stock: ${description}`)
      .option('--url <ws url>')
      .option('--api-key <key>', 'API key (default: the demo key)')
      .option('--api-secret <secret>', 'API secret (default: the demo key)')
      .addOption(chainOption(STREAM_CHAIN))
      .option('--json', 'one JSON line per frame')
      .action(async (o: StreamOptions) => {
        const client = await streams({ ...o, stock: true }, true);
        follow(client, name, undefined, o, line);
      });
  }
  return stream;
}

export function tradeCommands(): Command[] {
  return [stockCommand(), perpCommand(), streamCommand()];
}
