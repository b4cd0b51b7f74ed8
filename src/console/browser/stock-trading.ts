/// <reference lib="dom" />
/**
 * Stock trading from the console (docs/console.md, "Stock orders"), all through One Click: the demo
 * wallet signs the delegation once (`1ct/prepare` → EIP-712 signature here → `1ct/enable`), then
 * every order and cancel is a `…/send` the stock API's relayer sends. When the exchange balance is
 * short (mUSD for a buy, shares for a sell) the order goes as `orders/with-deposit/send`, which
 * deposits from the wallet in the same transaction; the wallet first approves the StockRouter for
 * what is missing, itself, through the embedded anvil (the only call the page makes to the chain).
 */
import { createPublicClient, createWalletClient, http, parseAbi, type Address, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { formatCash, formatShares, formatStockPrice, isPositiveDecimal } from './amount-format.ts';
import { ApiError, type StockRequest } from './api-clients.ts';
import { $, compareDecimal, fromScaled, toScaled, type Row } from './dom.ts';

const ERC20 = parseAbi(['function approve(address spender, uint256 amount) returns (bool)', 'function allowance(address owner, address spender) view returns (uint256)']);

/** A limit buy locks quantity × price plus the fee (at most 1 % here): the allowance asked covers it. */
const FEE_ALLOWANCE_BPS = 100n;
const MUSD = 18;
const SHARES = 18;

export interface StockTradingDeps {
  rest: StockRequest;
  wallet: PrivateKeyAccount;
  chainId: number;
  rpcUrl: string;
  contracts: { stockRouter: string; cashToken: string; stocks: Record<string, string> };
  /** The stock balance as last shown (mUSD available, shares free, cash token's decimals). */
  balance(): Row | undefined;
  /** The last quote shown of a symbol. */
  quote(symbol: string): Row | undefined;
  /** An order as the API answers it: shown in "Stock orders" (or History once done). */
  onOrder(order: Row): void;
  /** Reads the balance again (after a deposit). */
  refreshBalance(): Promise<void>;
}

export interface StockOrderInput {
  symbol: string;
  side: 'Buy' | 'Sell';
  type: 'Market' | 'Limit';
  quantity?: string;
  notional?: string;
  price?: string;
}

/** The form's checks, before anything leaves the page: the field and why, or undefined. */
export function checkStockOrder(o: StockOrderInput): string | undefined {
  const need = (field: string, v: string | undefined) => (v === undefined || v === '' ? `${field} is required` : isPositiveDecimal(v) ? undefined : `${field} must be a positive number (digits and a point, e.g. 2.5), not ${v}`);
  if (o.type === 'Market' && o.side === 'Buy') return need('Notional', o.notional);
  if (o.type === 'Market') return need('Quantity', o.quantity);
  return need('Quantity', o.quantity) ?? need('Limit price', o.price);
}

/** How the order is said in the status line: `Sell 2.000000 TSLA at 500.00 (limit, DAY)`. */
export function describeStockOrder(o: Row): string {
  const amount = o.quantity ? `${formatShares(o.quantity)} ${o.symbol}` : `${formatCash(o.notional)} mUSD of ${o.symbol}`;
  return `${o.side} ${amount} ${o.price ? `at ${formatStockPrice(o.price)} (limit, DAY)` : 'at market'}`;
}

export function stockTrading(deps: StockTradingDeps) {
  const status = $('stock-status');
  const chain = { id: deps.chainId, name: 'tokex', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [deps.rpcUrl] } } } as const;
  const publicClient = createPublicClient({ chain, transport: http(deps.rpcUrl) });
  const walletClient = createWalletClient({ account: deps.wallet, chain, transport: http(deps.rpcUrl) });
  let enabled = false;
  const deadline = () => Math.floor(Date.now() / 1000) + 3600;

  const showOneClick = (s: Row) => {
    // `delegationStatus` is tokex's word (`enabled`); `status` is Anchored's (`enable`).
    enabled = (s.delegationStatus ?? s.status) === 'enabled';
    $('oneclick-status').textContent = enabled ? `One Click: enabled (relayer ${s.delegatee}).` : 'One Click: not enabled. Stock orders go through One Click: enable it once (one signature of the wallet).';
    $('oneclick-enable').hidden = enabled;
  };

  async function refreshOneClick(): Promise<void> {
    showOneClick(await deps.rest<Row>('GET', '/1ct/status'));
  }

  async function enableOneClick(): Promise<void> {
    const prepared = await deps.rest<{ signPayload: any; deadline: number }>('POST', '/1ct/prepare', undefined, { deadline: deadline() });
    const signature = await deps.wallet.signTypedData(prepared.signPayload);
    const answer = await deps.rest<Row>('POST', '/1ct/enable', undefined, { signature, deadline: prepared.deadline });
    // The relayer sends delegateBySig: the router says enabled once it is mined.
    for (let i = 0; i < 60 && !enabled; i++) {
      showOneClick(i === 0 ? answer : await deps.rest<Row>('GET', '/1ct/status'));
      if (!enabled) await new Promise((r) => setTimeout(r, 500));
    }
    if (!enabled) throw new Error(`the delegation ${answer.txHash ?? ''} is not on chain yet: One Click shows enabled once it is`);
  }

  /** Approves the StockRouter for `amount` of `token` (base units) when the allowance is less. */
  async function ensureAllowance(token: string, amount: bigint, what: string): Promise<void> {
    const owner = deps.wallet.address;
    const spender = deps.contracts.stockRouter as Address;
    const current = await publicClient.readContract({ address: token as Address, abi: ERC20, functionName: 'allowance', args: [owner, spender] });
    if (current >= amount) return;
    status.textContent = `Approving the StockRouter for ${what} from the wallet…`;
    const hash: Hex = await walletClient.writeContract({ address: token as Address, abi: ERC20, functionName: 'approve', args: [spender, amount] });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`the approval ${hash} reverted`);
  }

  /**
   * What the exchange balance lacks for the order, or undefined when it covers it: a buy needs its
   * notional (market) or quantity × price plus the fee (limit) in available mUSD, a sell its
   * quantity in free shares.
   */
  function shortfall(o: StockOrderInput): { token: string; amount: bigint; what: string } | undefined {
    const b = deps.balance();
    if (o.side === 'Buy') {
      const available = toScaled(String(b?.mUsdDetail?.available ?? '0'), MUSD);
      const lock =
        o.type === 'Market'
          ? toScaled(o.notional!, MUSD)
          : (toScaled(o.quantity!, MUSD) * toScaled(o.price!, MUSD) * (10_000n + FEE_ALLOWANCE_BPS)) / (10n ** BigInt(MUSD) * 10_000n);
      if (available >= lock) return undefined;
      const cash = ((b?.cashTokenBalances ?? []) as Row[]).find((c) => c.address?.toLowerCase() === deps.contracts.cashToken.toLowerCase()) ?? (b?.cashTokenBalances ?? [])[0];
      const decimals = Number(cash?.decimals ?? 6);
      // mUSD (18 places) to the cash token's units, rounded up.
      const unit = 10n ** BigInt(MUSD - decimals);
      return { token: deps.contracts.cashToken, amount: (lock + unit - 1n) / unit, what: `${formatCash(fromScaled(lock, MUSD))} ${cash?.symbol ?? 'USDC'}` };
    }
    const row = ((b?.tokenBalances ?? []) as Row[]).find((t) => t.symbol === o.symbol && t.isStock !== false);
    const free = String(row?.exchangeBalance ?? '0');
    if (compareDecimal(free, o.quantity!) >= 0) return undefined;
    const token = deps.contracts.stocks[o.symbol];
    return { token, amount: toScaled(o.quantity!, SHARES), what: `${formatShares(o.quantity)} ${o.symbol}` };
  }

  async function place(o: StockOrderInput): Promise<Row> {
    if (!enabled) await refreshOneClick();
    if (!enabled) throw new ApiError(400, 'One Click is not enabled for the demo wallet: press Enable One Click first');
    const body: Row = {
      symbol: o.symbol, side: o.side, type: o.type, deadline: deadline(),
      ...(o.type === 'Market' && o.side === 'Buy' ? { notional: o.notional } : { quantity: o.quantity }),
      ...(o.type === 'Limit' ? { price: o.price, timeInForce: 'DAY' } : {}),
    };
    const short = shortfall(o);
    let sent: Row;
    if (short) {
      await ensureAllowance(short.token, short.amount, short.what);
      status.textContent = `The exchange balance is short: depositing ${short.what} from the wallet with the order…`;
      sent = await deps.rest<Row>('POST', '/orders/with-deposit/send', undefined, body);
    } else {
      status.textContent = `Sending: ${describeStockOrder(body)}…`;
      sent = await deps.rest<Row>('POST', '/orders/send', undefined, body);
    }
    const orderId = sent.orderId ?? sent.orderIds?.[0];
    if (!orderId) throw new Error(`the order's transaction ${sent.txHash ?? ''} is ${sent.status}: it shows under Stock orders once indexed`);
    const order = await deps.rest<Row>('GET', `/orders/${encodeURIComponent(orderId)}`);
    deps.onOrder(order);
    if (short) await deps.refreshBalance().catch(() => undefined);
    status.textContent = `Stock order ${orderId} ${order.state === 'history' ? (order.history?.status ?? order.status) : 'open'}: ${describeStockOrder(order)}${short ? `, with ${short.what} deposited from the wallet` : ''}.`;
    return order;
  }

  async function cancel(orderId: string): Promise<void> {
    status.textContent = `Canceling stock order ${orderId}…`;
    await deps.rest<Row>('DELETE', `/orders/${encodeURIComponent(orderId)}/send`);
    const order = await deps.rest<Row>('GET', `/orders/${encodeURIComponent(orderId)}`);
    deps.onOrder(order);
    status.textContent = order.state === 'history' ? `Stock order ${orderId} canceled.` : `Stock order ${orderId} canceling: the executor releases its lock.`;
  }

  return { refreshOneClick, enableOneClick, place, cancel, status };
}
