/**
 * A small trading bot on @tokex/sdk, the kind an integrator writes and then tests against the
 * sandbox (bot.test.ts, with @tokex/testkit):
 *
 * - `PerpBot`: its own API key (made with its wallet's signature), collateral in the margin vault, a
 *   leveraged long on a perpetual; retries what the venue rate-limits (the SDK honours `Retry-After`)
 *   and counts the 429s it met.
 * - `StockBuyer`: cash in with its wallet, market-buys a stock, reads its holding; and, when the
 *   venue's operator has gone silent, takes its money back on chain without the API (the
 *   StockRouter's escape hatch, docs/security.md).
 *
 * Nothing here knows about the sandbox: the same code runs against `npm start` or a real venue.
 */
import { createPublicClient, createWalletClient, erc20Abi, http, parseAbi, parseUnits, formatUnits, type Address, type Hash } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { PerpClient, StockClient, selfSubmitOperation, selfSubmitOrder, type PlacedOrder, type Position } from '@tokex/sdk';

export interface PerpBotOptions {
  baseUrl: string;
  chainId: number;
  privateKey: `0x${string}`;
  /** The bot's key, made once by `PerpBot.createKey`. */
  credentials: { apiKey: string; apiSecret: string };
  /** Retries of a refused idempotent call (429, 503). Default 5. */
  retries?: number;
}

export class PerpBot {
  readonly wallet: PrivateKeyAccount;
  readonly api: PerpClient;
  /** What the bot met on the wire: every answer, and those that were 429 (each retried by the SDK). */
  readonly stats = { answers: 0, rateLimited: 0 };

  constructor(opts: PerpBotOptions) {
    this.wallet = privateKeyToAccount(opts.privateKey);
    const counting: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      this.stats.answers += 1;
      if (res.status === 429) this.stats.rateLimited += 1;
      return res;
    };
    this.api = new PerpClient({ ...opts.credentials, baseUrl: opts.baseUrl, chainId: opts.chainId, fetch: counting, retry: { retries: opts.retries ?? 5 } });
  }

  /** An API key for the wallet (READ and TRADE), authorised by its EIP-712 signature. */
  static async createKey(baseUrl: string, chainId: number, privateKey: `0x${string}`): Promise<{ apiKey: string; apiSecret: string }> {
    const created = await PerpClient.createApiKey(baseUrl, privateKeyToAccount(privateKey), { label: 'trading-bot', permissions: ['READ', 'TRADE'], chainId });
    return { apiKey: created.apiKey, apiSecret: created.apiSecret };
  }

  get apiKey(): string {
    return this.api.apiKey;
  }

  /** Approves the vault and deposits `amount` USDC; resolves once the engine has credited it. */
  async deposit(amount: string): Promise<void> {
    await this.api.depositCollateral(this.wallet, amount);
  }

  account() {
    return this.api.getAccount();
  }

  /**
   * A market long of `leverage` times the account's free collateral (95 % of it, the rest for the
   * fee), at the mark: the size rounded down to the instrument's lot.
   */
  async openLong(symbol: string, leverage: number): Promise<PlacedOrder> {
    await this.api.setLeverage({ symbol, leverage });
    const [instrument] = await this.api.getInstruments({ symbol });
    const [ticker] = await this.api.getTickers({ symbol });
    if (!ticker?.markPrice) throw new Error(`${symbol}: no mark price yet`);
    const free = (await this.account()).freeCollateral;
    const d = 18;
    const notional = (parseUnits(free, d) * BigInt(leverage) * 95n) / 100n;
    const lot = parseUnits(instrument.lotSize, d);
    const size = ((notional * 10n ** 18n) / parseUnits(ticker.markPrice, d) / lot) * lot;
    return this.api.placeOrder<PlacedOrder>(this.wallet, { symbol, side: 'BUY', type: 'MARKET', size: formatUnits(size, d) });
  }

  /** The open position in `symbol`, if any. */
  async position(symbol: string): Promise<Position | undefined> {
    const page = await this.api.getPositions({ symbol });
    return page.rows.find((p) => p.symbol === symbol && Number(p.size) !== 0);
  }
}

/**
 * The StockRouter functions a wallet calls on its own when the operator is gone (docs/contracts.md,
 * "StockRouter"). Neither @tokex/contract nor @tokex/sdk exports the router's ABI (only the
 * MarginVault's escape fragment, `MARGIN_VAULT_ESCAPE_ABI`), so the fragment is written here.
 */
export const STOCK_ROUTER_EXIT_ABI = parseAbi([
  'function emergencyCancel(uint256 orderId)',
  'function withdraw(address token, uint256 amount) returns (bool instant, uint256 queueId)',
  'function escapeHatchOpen() view returns (bool)',
  'function lastOperatorActivity() view returns (uint64)',
  'function operatorSilence() view returns (uint32)',
  'error EscapeHatchClosed()',
  'error NotOrderOwner(uint256 orderId)',
  'error OrderNotOpen(uint256 orderId)',
  'error InsufficientBalance(uint256 available, uint256 required)',
]);

export interface StockBuyerOptions {
  baseUrl: string;
  chainId: number;
  rpcUrl: string;
  /** The venue's StockRouter (demo.json `stock.contracts.stockRouter`): the escape hatch is called on it directly. */
  router: Address;
  /** A WRITABLE key bound to the wallet below. */
  credentials: { apiKey: string; apiSecret: string };
  privateKey: `0x${string}`;
  /** The venue's time in ms (an order's deadline is checked on it). Default: this machine's clock. */
  now?: () => Promise<number> | number;
}

export class StockBuyer {
  readonly api: StockClient;
  readonly holder: Address;
  readonly router: Address;
  readonly #wallet;
  readonly #reader;
  readonly #now: () => Promise<number> | number;

  constructor(opts: StockBuyerOptions) {
    this.api = new StockClient({ ...opts.credentials, baseUrl: opts.baseUrl, chainId: opts.chainId });
    const chain = { id: opts.chainId, name: 'tokex', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [opts.rpcUrl] } } } as const;
    this.#wallet = createWalletClient({ account: privateKeyToAccount(opts.privateKey), chain, transport: http(opts.rpcUrl) });
    this.#reader = createPublicClient({ chain, transport: http(opts.rpcUrl) });
    this.holder = this.#wallet.account.address;
    this.router = opts.router;
    this.#now = opts.now ?? Date.now;
  }

  /** Deposits `amount` of a cash token (USDC) into the venue's mUSD; resolves once credited. */
  deposit(token: Address, amount: string) {
    return selfSubmitOperation(this.api, this.#wallet, this.#reader, 'cashDeposit', { tokenAddress: token, tokenAmount: amount }, { timeoutMs: 60_000 });
  }

  /**
   * Market-buys `symbol` for `notional` mUSD (fees included) with the wallet's own transaction;
   * resolves once the order is settled (`history`), or with `until: 'open'` once the venue shows it
   * open. The deadline (when the transaction may still be mined) is the venue's time plus 10 minutes.
   */
  async marketBuy(symbol: string, notional: string, until: 'open' | 'history' = 'history') {
    const deadline = Math.floor(Number(await this.#now()) / 1000) + 600;
    return selfSubmitOrder(this.api, this.#wallet, this.#reader, { symbol, side: 'Buy', type: 'Market', notional, deadline }, { until, timeoutMs: 60_000 });
  }

  /** Deposits `cash` USDC into mUSD, then market-buys `symbol` for `notional` mUSD; resolves once settled. */
  async buy(symbol: string, notional: string, cash: { token: Address; amount: string }) {
    await this.deposit(cash.token, cash.amount);
    return this.marketBuy(symbol, notional);
  }

  /** The escape hatch as the chain sees it: open or not, the operator's last settlement (unix s) and the silence that opens it (s). */
  async escapeHatch(): Promise<{ open: boolean; lastOperatorActivity: number; operatorSilence: number }> {
    const read = <F extends 'escapeHatchOpen' | 'lastOperatorActivity' | 'operatorSilence'>(functionName: F) =>
      this.#reader.readContract({ address: this.router, abi: STOCK_ROUTER_EXIT_ABI, functionName });
    const [open, last, silence] = await Promise.all([read('escapeHatchOpen'), read('lastOperatorActivity'), read('operatorSilence')]);
    return { open, lastOperatorActivity: Number(last), operatorSilence: silence };
  }

  /**
   * Cancels the wallet's own open order on chain, without the operator: its whole lock goes back to
   * the wallet's free mUSD. Only while the hatch is open; otherwise the router's refusal is thrown
   * (viem's error: `EscapeHatchClosed`).
   */
  async emergencyCancel(orderId: string): Promise<Hash> {
    // Simulated first: a refusal throws with the router's error before anything is sent.
    const { request } = await this.#reader.simulateContract({
      account: this.#wallet.account, address: this.router, abi: STOCK_ROUTER_EXIT_ABI, functionName: 'emergencyCancel', args: [BigInt(orderId)],
    });
    return this.#mined(await this.#wallet.writeContract(request));
  }

  /** Withdraws `amount` of a cash token from the wallet's free mUSD on chain (instant within the token's withdrawal buffer). */
  async withdrawCash(token: Address, amount: string): Promise<Hash> {
    const decimals = await this.#reader.readContract({ address: token, abi: erc20Abi, functionName: 'decimals' });
    const { request } = await this.#reader.simulateContract({
      account: this.#wallet.account, address: this.router, abi: STOCK_ROUTER_EXIT_ABI, functionName: 'withdraw', args: [token, parseUnits(amount, decimals)],
    });
    return this.#mined(await this.#wallet.writeContract(request));
  }

  /** The wallet's own balance of a token, in its base units. */
  walletBalance(token: Address): Promise<bigint> {
    return this.#reader.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [this.holder] });
  }

  async #mined(hash: Hash): Promise<Hash> {
    const receipt = await this.#reader.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
    return hash;
  }

  /** Shares of `symbol` held: in the wallet, on the exchange and locked in orders (18 decimals). */
  async shares(symbol: string): Promise<bigint> {
    const balance = await this.api.getBalance(this.holder);
    const t = (balance.tokenBalances as Array<{ stockSymbol?: string; symbol?: string; decimals: number; walletBalance: string; exchangeBalance: string; lockedExchangeBalance: string }>).find(
      (b) => (b.stockSymbol ?? b.symbol) === symbol,
    );
    if (!t) return 0n;
    return parseUnits(t.walletBalance, t.decimals) + parseUnits(t.exchangeBalance, t.decimals) + parseUnits(t.lockedExchangeBalance, t.decimals);
  }
}
