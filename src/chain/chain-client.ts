import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  decodeErrorResult,
  defineChain,
  ExecutionRevertedError,
  HttpRequestError,
  http,
  InsufficientFundsError,
  LimitExceededRpcError,
  NonceTooHighError,
  NonceTooLowError,
  RawContractError,
  ResourceUnavailableRpcError,
  RpcRequestError,
  SocketClosedError,
  TimeoutError,
  WaitForTransactionReceiptTimeoutError,
  WebSocketRequestError,
  type Abi,
  type Chain,
  type Hex,
  type HttpTransport,
  type PrivateKeyAccount,
  type PublicClient,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { AppError, ChainRevertError, ChainUnavailableError } from '../errors/app-error.ts';
import {
  accountLensAbi,
  cashierAbi,
  cashTokenAbi,
  marginVaultAbi,
  oneClickRouterAbi,
  stockAbi,
  stockRouterAbi,
} from './abi/generated/index.ts';
import { ANVIL_CHAIN_ID } from './anvil-accounts.ts';

type AbiError = Extract<Abi[number], { type: 'error' }>;

export type ChainPublicClient = PublicClient<HttpTransport, Chain>;
export type ChainWalletClient = WalletClient<HttpTransport, Chain, PrivateKeyAccount>;

export interface ChainClientOptions {
  rpcUrl: string;
  chainId: number;
  /** Key of the operator (owner, settlement, One Click relay). Never logged. */
  operatorPrivateKey?: Hex;
  /** Per-request timeout. Default 5 s: an RPC outage must be answered fast. */
  timeoutMs?: number;
  /** Block / receipt polling. Default 100 ms on the local chain, 1 s elsewhere. */
  pollingIntervalMs?: number;
  /**
   * How long the public client reuses a block number it read (viem's `cacheTime`). Default: the
   * polling interval. 0 for a chain that can be rewound, as a test's anvil reverted to a snapshot:
   * a head read before the revert would otherwise be answered after it.
   */
  cacheTimeMs?: number;
  /**
   * Send the public client's calls made in one turn of the event loop as one JSON-RPC batch
   * (viem's transport batching): for request-path reads, where concurrent requests' balance reads
   * then share one HTTP exchange (fetch costs several times the call itself). Default false: the
   * indexer sizes and paces its log ranges one request at a time.
   */
  batch?: boolean;
}

export interface ChainClients {
  chain: Chain;
  publicClient: ChainPublicClient;
  operatorAccount?: PrivateKeyAccount;
  walletClient?: ChainWalletClient;
}

/** A viem chain for `chainId` served at `rpcUrl`. */
export function chainFor(chainId: number, rpcUrl: string): Chain {
  return defineChain({
    id: chainId,
    name: chainId === ANVIL_CHAIN_ID ? 'Anvil' : `Chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

/**
 * Per JSON-RPC request of the deploy and the contracts' upgrades (at start and by `tokex upgrade`):
 * nobody waits on them for an answer, and a node slow under load must not fail them.
 */
export const SETUP_RPC_TIMEOUT_MS = 30_000;

/**
 * The viem transport every client of this backend uses: viem's http transport as is, with a short
 * timeout (an RPC outage must be answered fast, as a 503) and at most one retry.
 */
export function chainTransport(rpcUrl: string, timeoutMs = 5_000, batch = false): HttpTransport {
  return http(rpcUrl, { timeout: timeoutMs, retryCount: 1, retryDelay: 100, ...(batch ? { batch: { batchSize: 64, wait: 0 } } : {}) });
}

/** A wallet client for `privateKey` on the same chain and transport settings. */
export function createChainWallet(
  privateKey: Hex,
  opts: { chain: Chain; rpcUrl: string; timeoutMs?: number; pollingIntervalMs?: number },
): ChainWalletClient {
  return createWalletClient({
    account: privateKeyToAccount(privateKey),
    chain: opts.chain,
    transport: chainTransport(opts.rpcUrl, opts.timeoutMs),
    pollingInterval: opts.pollingIntervalMs ?? defaultPolling(opts.chain.id),
  });
}

function defaultPolling(chainId: number): number {
  return chainId === ANVIL_CHAIN_ID ? 100 : 1_000;
}

export function createChainClients(opts: ChainClientOptions): ChainClients {
  const chain = chainFor(opts.chainId, opts.rpcUrl);
  const pollingInterval = opts.pollingIntervalMs ?? defaultPolling(opts.chainId);
  const publicClient = createPublicClient({
    chain,
    transport: chainTransport(opts.rpcUrl, opts.timeoutMs, opts.batch ?? false),
    pollingInterval,
    ...(opts.cacheTimeMs !== undefined ? { cacheTime: opts.cacheTimeMs } : {}),
  });
  if (!opts.operatorPrivateKey) return { chain, publicClient };
  const walletClient = createChainWallet(opts.operatorPrivateKey, {
    chain,
    rpcUrl: opts.rpcUrl,
    timeoutMs: opts.timeoutMs,
    pollingIntervalMs: pollingInterval,
  });
  return { chain, publicClient, operatorAccount: walletClient.account, walletClient };
}

// ------------------------------------------------------------------ errors

function errorSignature(e: AbiError): string {
  return `${e.name}(${e.inputs.map((i) => i.type).join(',')})`;
}

/** Every custom error of every contract, once: decodes any revert of the stack. */
export const chainErrorAbi: readonly AbiError[] = (() => {
  const seen = new Map<string, AbiError>();
  const abis: readonly Abi[] = [stockRouterAbi, cashierAbi, stockAbi, oneClickRouterAbi, cashTokenAbi, accountLensAbi, marginVaultAbi];
  for (const abi of abis) {
    for (const item of abi) {
      if (item.type === 'error' && !seen.has(errorSignature(item))) seen.set(errorSignature(item), item);
    }
  }
  return [...seen.values()];
})();

export interface DecodedRevert {
  errorName: string;
  args: readonly unknown[];
}

/** Decodes revert data with every contract's errors (plus `Error(string)` and `Panic(uint256)`). */
export function decodeRevertData(data: Hex | undefined): DecodedRevert | undefined {
  if (!data || data === '0x' || data.length < 10) return undefined;
  try {
    const decoded = decodeErrorResult({ abi: chainErrorAbi as Abi, data });
    return { errorName: decoded.errorName, args: (decoded.args ?? []) as readonly unknown[] };
  } catch {
    return undefined;
  }
}

function findRevertData(err: BaseError): Hex | undefined {
  let found: Hex | undefined;
  err.walk((e) => {
    if (found) return true;
    if (e instanceof ContractFunctionRevertedError && e.raw) found = e.raw;
    else if (e instanceof RawContractError) {
      const d = typeof e.data === 'object' ? e.data?.data : e.data;
      if (d) found = d;
    } else if (e instanceof RpcRequestError || e instanceof ExecutionRevertedError) {
      const d = (e as { data?: unknown }).data;
      const hex = typeof d === 'string' ? d : typeof d === 'object' && d && 'data' in d ? (d as { data?: unknown }).data : undefined;
      if (typeof hex === 'string' && hex.startsWith('0x')) found = hex as Hex;
    }
    return false;
  });
  return found;
}

function stringify(args: readonly unknown[]): string[] {
  return args.map((a) => (typeof a === 'bigint' ? a.toString() : String(a)));
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

function isConnectionFailure(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 6; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
    if (e instanceof Error && (e.name === 'AbortError' || e.name === 'TimeoutError')) return true;
    if (e instanceof TypeError && /fetch failed/i.test(e.message)) return true;
  }
  return false;
}

/**
 * Maps anything a chain call throws to the backend's errors: transport trouble (connection
 * refused, timeout, HTTP error status) → `ChainUnavailableError` (retryable); a contract revert →
 * `ChainRevertError` with the custom error's name (`detail.errorArgs` holds its arguments for the
 * log). Messages and details never carry the RPC URL (it may embed a provider key), request
 * bodies or keys: viem's own error text is deliberately not passed on.
 */
export function toChainError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof BaseError) {
    const transport = err.walk(
      (e) =>
        e instanceof HttpRequestError ||
        e instanceof TimeoutError ||
        e instanceof WebSocketRequestError ||
        e instanceof SocketClosedError ||
        e instanceof WaitForTransactionReceiptTimeoutError ||
        // A provider's rate limit or overload answered as a JSON-RPC error (HTTP 429 or 5xx with a
        // body, -32005 limit exceeded, -32002 resource unavailable): the node is there but will not
        // serve now, the same as an outage for every caller.
        e instanceof LimitExceededRpcError ||
        e instanceof ResourceUnavailableRpcError ||
        (e instanceof RpcRequestError && e.status !== undefined && (e.status === 429 || e.status >= 500)),
    );
    if (transport) {
      const status = transport instanceof HttpRequestError || transport instanceof RpcRequestError ? transport.status : undefined;
      return new ChainUnavailableError({ detail: { reason: transport.name, ...(status ? { status } : {}) } });
    }

    const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
    if (reverted?.data) {
      const args = stringify((reverted.data.args ?? []) as readonly unknown[]);
      return new ChainRevertError(reverted.data.errorName, { detail: { errorName: reverted.data.errorName, errorArgs: args } });
    }
    const decoded = decodeRevertData(findRevertData(err));
    if (decoded) {
      return new ChainRevertError(decoded.errorName, {
        detail: { errorName: decoded.errorName, errorArgs: stringify(decoded.args) },
      });
    }
    if (reverted || err.walk((e) => e instanceof ExecutionRevertedError)) {
      return new ChainRevertError(reverted?.reason ? 'Error' : undefined, {
        detail: reverted?.reason ? { reason: reverted.reason.slice(0, 200) } : undefined,
      });
    }

    const nodeRejection = err.walk(
      (e) => e instanceof NonceTooLowError || e instanceof NonceTooHighError || e instanceof InsufficientFundsError,
    );
    if (nodeRejection) {
      return new AppError('INTERNAL', 'chain: transaction rejected by the node', {
        retryable: !(nodeRejection instanceof InsufficientFundsError),
        detail: { reason: nodeRejection.name },
      });
    }
    if (isConnectionFailure(err)) return new ChainUnavailableError({ detail: { reason: 'connection' } });
    return new AppError('INTERNAL', 'chain: unexpected error', { detail: { reason: err.name } });
  }
  if (isConnectionFailure(err)) return new ChainUnavailableError({ detail: { reason: 'connection' } });
  return new AppError('INTERNAL', 'chain: unexpected error', {
    detail: { reason: err instanceof Error ? err.name : typeof err },
  });
}
