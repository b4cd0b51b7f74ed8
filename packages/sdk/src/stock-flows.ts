/**
 * Whole stock flows on top of StockClient, with a viem wallet:
 * - self-submit: calldata → the wallet sends it → the transaction is recorded → poll until settled
 *   (approving the spender the API names first when the wallet's allowance is short);
 * - One Click: the relayer sends for the wallet (after `client.enableOneClick(account)`) → poll.
 * Reads answer 404 until the indexer has reached the transaction's block: polling treats that as
 * "not yet", any other refusal as final.
 */
import { erc20Abi, maxUint256, parseUnits } from 'viem';
import { StockApiError, TokexTimeoutError } from './errors.ts';
import { sleep } from './retry-policy.ts';
import type { StockClient } from './stock-client.ts';
import type { Calldata, OperationView, StockOrderInput, StockOrderView, TokenAmountInput } from './stock-types.ts';
import type { OperationKind } from './stock/actions/operations/operation-path.ts';

export type { OperationKind } from './stock/actions/operations/operation-path.ts';

type Hex = `0x${string}`;

// The two interfaces name only what the flows call; viem's own signatures are generic beyond what
// a structural type can restate, hence the loose parameter types.

/** What sends a transaction: a viem WalletClient with an account and a chain. */
export interface CalldataSender {
  sendTransaction(tx: any): Promise<Hex>;
  writeContract(args: any): Promise<Hex>;
  account?: { address: Hex };
}

/** What waits for receipts and reads the chain: a viem PublicClient. */
export interface ChainReader {
  waitForTransactionReceipt(args: { hash: Hex }): Promise<{ status: 'success' | 'reverted' }>;
  readContract(args: any): Promise<unknown>;
}

export interface PollOptions {
  /** Give up after this long. Default 60 s. */
  timeoutMs?: number;
  /** Between reads. Default 250 ms. */
  intervalMs?: number;
  /** Called after each read that is not final, with what it answered (`not indexed yet` for a 404): a progress display. */
  onWait?: (state: string) => void;
}

/** A short word for a value still awaited: its order state or operation status when it has one. */
function stateOf(value: unknown): string {
  if (value && typeof value === 'object') {
    const v = value as { operationStatus?: unknown; state?: unknown; openOrder?: { status?: unknown } | null };
    if (typeof v.operationStatus === 'string') return v.operationStatus;
    if (typeof v.openOrder?.status === 'string') return v.openOrder.status;
    if (typeof v.state === 'string') return v.state;
  }
  return 'waiting';
}

/** Reads until `done` holds; a 404 (not indexed yet) counts as not done. */
export async function pollUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, opts: PollOptions = {}): Promise<T> {
  const until = Date.now() + (opts.timeoutMs ?? 60_000);
  let last: T | undefined;
  for (;;) {
    let state: string;
    try {
      last = await read();
      if (done(last)) return last;
      state = stateOf(last);
    } catch (err) {
      if (!(err instanceof StockApiError && err.code === 404)) throw err;
      state = 'not indexed yet';
    }
    opts.onWait?.(state);
    if (Date.now() > until) throw new TokexTimeoutError(`still waiting after ${opts.timeoutMs ?? 60_000} ms${last === undefined ? ' (not indexed yet)' : ''}`, state);
    await sleep(opts.intervalMs ?? 250);
  }
}

/** Sends calldata from the wallet and waits for its receipt; a reverted transaction throws. */
export async function sendCalldata(wallet: CalldataSender, reader: ChainReader, calldata: Calldata): Promise<Hex> {
  const hash = await wallet.sendTransaction({ to: calldata.toAddress, data: calldata.callData, value: BigInt(calldata.value || '0') });
  const receipt = await reader.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
  return hash;
}

/** Approves `spender` for the token (unlimited) when the wallet's allowance is below `amount` token units. */
export async function ensureAllowance(wallet: CalldataSender, reader: ChainReader, token: Hex, spender: Hex, amount: string): Promise<Hex | undefined> {
  const owner = wallet.account?.address;
  if (!owner) throw new Error('the wallet client has no account');
  const decimals = Number(await reader.readContract({ address: token, abi: erc20Abi, functionName: 'decimals' }));
  const allowance = (await reader.readContract({ address: token, abi: erc20Abi, functionName: 'allowance', args: [owner, spender] })) as bigint;
  if (allowance >= parseUnits(amount, decimals)) return undefined;
  const hash = await wallet.writeContract({ address: token, abi: erc20Abi, functionName: 'approve', args: [spender, maxUint256] });
  const receipt = await reader.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error(`approve ${hash} reverted`);
  return hash;
}

/** The four operation kinds and the client methods of each step. */
const OPERATIONS = {
  cashDeposit: { calldata: 'cashDepositCalldata', send: 'sendCashDeposit', record: 'recordCashDepositTx', get: 'getCashDeposit' },
  cashWithdrawal: { calldata: 'cashWithdrawalCalldata', send: 'sendCashWithdrawal', record: 'recordCashWithdrawalTx', get: 'getCashWithdrawal' },
  stockDeposit: { calldata: 'stockDepositCalldata', send: 'sendStockDeposit', record: 'recordStockDepositTx', get: 'getStockDeposit' },
  stockWithdrawal: { calldata: 'stockWithdrawalCalldata', send: 'sendStockWithdrawal', record: 'recordStockWithdrawalTx', get: 'getStockWithdrawal' },
} as const;

const settled = (o: OperationView) => o.operationStatus === 'completed' || o.operationStatus === 'failed';

/**
 * A cash or stock deposit or withdrawal sent by the wallet itself: calldata, the approval it needs
 * (deposits draw on an allowance to `spenderAddress`), the transaction, `…/tx` to record it, then
 * polling until `completed` or `failed`.
 */
export async function selfSubmitOperation(
  api: StockClient,
  wallet: CalldataSender,
  reader: ChainReader,
  kind: OperationKind,
  input: TokenAmountInput,
  opts: PollOptions & { approve?: boolean } = {},
): Promise<OperationView> {
  const m = OPERATIONS[kind];
  const calldata = await api[m.calldata](input);
  if (opts.approve !== false && calldata.spenderAddress && kind.endsWith('Deposit')) {
    await ensureAllowance(wallet, reader, input.tokenAddress as Hex, calldata.spenderAddress, input.tokenAmount);
  }
  const recorded = await api[m.record](await sendCalldata(wallet, reader, calldata));
  const operationId = recorded.operationId ?? recorded.operationIds[0];
  if (!operationId) throw new Error(`transaction ${recorded.txHash} recorded no operation`);
  return pollUntil(() => api[m.get](operationId), settled, opts);
}

/** The order states a flow may wait for: `open` (resting), `history` (settled, cancelled or expired). */
export type OrderWait = 'open' | 'history' | 'any';

function reached(until: OrderWait): (o: StockOrderView) => boolean {
  return (o) => until === 'any' || o.state === until || (until === 'open' && o.state === 'history');
}

/** An order placed by the wallet itself: `orders/calldata`, send, `orders/tx`, then polling until `until` (default `history`). */
export async function selfSubmitOrder(api: StockClient, wallet: CalldataSender, reader: ChainReader, order: StockOrderInput, opts: PollOptions & { until?: OrderWait } = {}): Promise<StockOrderView> {
  const calldata = await api.orderCalldata(order);
  const recorded = await api.recordOrderTx(await sendCalldata(wallet, reader, calldata));
  const orderId = recorded.orderId ?? recorded.orderIds[0];
  if (!orderId) throw new Error(`transaction ${recorded.txHash} placed no order`);
  return pollUntil(() => api.getOrder(orderId), reached(opts.until ?? 'history'), opts);
}

/** Cancels an order with the wallet's own transaction and waits until it is history. */
export async function selfSubmitCancel(api: StockClient, wallet: CalldataSender, reader: ChainReader, orderId: string, opts: PollOptions = {}): Promise<StockOrderView> {
  await sendCalldata(wallet, reader, await api.cancelOrderCalldata(orderId));
  return pollUntil(() => api.getOrder(orderId), reached('history'), opts);
}

/** An order the relayer places for the wallet (One Click enabled), polled until `until` (default `history`). */
export async function oneClickOrder(api: StockClient, order: StockOrderInput, opts: PollOptions & { until?: OrderWait } = {}): Promise<StockOrderView> {
  const sent = await api.sendOrder(order);
  const orderId = sent.orderId ?? sent.orderIds?.[0];
  if (!orderId) throw new Error(`send ${sent.requestId} is ${sent.status} without an order id yet`);
  return pollUntil(() => api.getOrder(orderId), reached(opts.until ?? 'history'), opts);
}

/** Cancels through the relayer and waits until the order is history. */
export async function oneClickCancel(api: StockClient, orderId: string, opts: PollOptions = {}): Promise<StockOrderView> {
  await api.sendCancelOrder(orderId);
  return pollUntil(() => api.getOrder(orderId), reached('history'), opts);
}

/** A deposit or withdrawal the relayer sends for the wallet, polled until `completed` or `failed`. */
export async function oneClickOperation(api: StockClient, kind: OperationKind, input: TokenAmountInput, opts: PollOptions = {}): Promise<OperationView> {
  const m = OPERATIONS[kind];
  const sent = await api[m.send](input);
  const operationId = sent.operationId ?? sent.operationIds?.[0];
  if (!operationId) throw new Error(`send ${sent.requestId} is ${sent.status} without an operation id yet`);
  return pollUntil(() => api[m.get](operationId), settled, opts);
}
