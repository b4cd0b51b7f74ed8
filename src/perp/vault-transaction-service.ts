/**
 * The approve flow (contract.md §B) and the deposit through the same shape (docs/perp-api.md
 * "Approve and deposit"): `prepare` answers the unsigned EIP-1559 transaction the wallet signs
 * (the collateral token's `approve(marginVault, amount)`, or the vault's `deposit(amount)`), and
 * `submit` takes the signed bytes back, checks that they are exactly that transaction, signed by
 * the key's wallet, for this chain, carrying no value, then broadcasts it and follows it to its
 * receipt. A refused transaction is never broadcast. The API never holds a key: it only relays what
 * the wallet signed.
 */
import type { PreparedVaultTransaction, VaultTransactionView } from '@tokex/contract';
import {
  decodeFunctionData,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  isHex,
  keccak256,
  parseTransaction,
  recoverTransactionAddress,
  type Address,
  type Hex,
} from 'viem';
import { AppError, ChainUnavailableError, NotFoundError, ValidationError } from '../errors/app-error.ts';
import type { AuthKey } from '../auth/api-key-service.ts';
import { marginVaultAbi } from '../chain/abi/generated/index.ts';
import { toChainError, type ChainPublicClient } from '../chain/chain-client.ts';
import { formatDecimal, parseDecimal } from '../lib/decimal.ts';
import type { Db } from '../storage/database.ts';
import { COLLATERAL_DECIMALS } from './engine/instruments.ts';
import { walletOf } from './venue-calls.ts';
import {
  getVaultTransaction,
  insertVaultTransaction,
  setVaultTransactionStatus,
  type VaultTransactionKind,
  type VaultTransactionRecord,
  type VaultTransactionStatus,
} from './store/vault-transaction-store.ts';

/** Head-room on the node's gas estimate. */
const GAS_HEADROOM_PERCENT = 120n;
/** A deposit's gas when it cannot be estimated yet (its approve is still pending): above what it uses. */
const DEPOSIT_GAS_BOUND = 150_000n;

function view(t: VaultTransactionRecord): VaultTransactionView {
  return {
    // The hash this service computed and stored.
    txHash: t.txHash as Hex,
    kind: t.kind,
    account: t.account,
    amount: formatDecimal(t.amount, COLLATERAL_DECIMALS),
    status: t.status,
    blockNumber: t.blockNumber === null ? null : String(t.blockNumber),
    submittedAt: t.submittedAt,
  };
}

const refuse = (reason: string) => new ValidationError('signedTransaction', reason);

/** A node's refusal in a few words, never the transaction itself. */
function nodeRefusal(err: unknown): AppError {
  const mapped = toChainError(err);
  if (mapped instanceof ChainUnavailableError) return mapped;
  const text = err instanceof Error ? err.message.toLowerCase() : '';
  for (const [needle, reason] of [
    ['nonce too low', 'its nonce is already used'],
    ['nonce too high', 'its nonce is ahead of the wallet'],
    ['insufficient funds', 'the wallet cannot pay its gas'],
    ['replacement', 'a transaction with its nonce is pending at a higher fee'],
    ['max fee per gas less than block base fee', 'its max fee is below the base fee'],
    ['intrinsic gas too low', 'its gas limit is too low'],
  ] as const) {
    if (text.includes(needle)) return refuse(`the node refused it: ${reason}`);
  }
  return refuse('the node refused it');
}

export function createVaultTransactionService(opts: {
  db: Db;
  publicClient: ChainPublicClient;
  chainId: number;
  contracts: { marginVault: Address; collateralToken: Address };
  /** How long a submit waits for the receipt before answering `pending`. Default 15 s. */
  waitMs?: number;
  now?: () => number;
}) {
  const { db, publicClient: chain } = opts;
  const now = opts.now ?? Date.now;
  const waitMs = opts.waitMs ?? 15_000;
  const vault = getAddress(opts.contracts.marginVault);
  const token = getAddress(opts.contracts.collateralToken);
  const target = (kind: VaultTransactionKind) => (kind === 'approve' ? token : vault);

  const calldata = (kind: VaultTransactionKind, amount: bigint): Hex =>
    kind === 'approve'
      ? encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [vault, amount] })
      : encodeFunctionData({ abi: marginVaultAbi, functionName: 'deposit', args: [amount] });

  /** The amount the calldata moves, or why it is not the expected call. */
  const decodeAmount = (kind: VaultTransactionKind, data: Hex | undefined): bigint => {
    if (data === undefined || data === '0x') throw refuse(`is not a ${kind} call: no calldata`);
    try {
      if (kind === 'approve') {
        const call = decodeFunctionData({ abi: erc20Abi, data });
        if (call.functionName !== 'approve') throw refuse(`calls ${call.functionName}, not approve`);
        const [spender, amount] = call.args as readonly [Address, bigint];
        if (getAddress(spender) !== vault) throw refuse('approves another spender than the margin vault');
        if (encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [spender, amount] }) !== data.toLowerCase()) throw refuse('has calldata beyond approve(spender, amount)');
        return amount;
      }
      const call = decodeFunctionData({ abi: marginVaultAbi, data });
      if (call.functionName !== 'deposit') throw refuse(`calls ${call.functionName}, not deposit`);
      const [amount] = call.args as readonly [bigint];
      if (encodeFunctionData({ abi: marginVaultAbi, functionName: 'deposit', args: [amount] }) !== data.toLowerCase()) throw refuse('has calldata beyond deposit(amount)');
      return amount;
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw refuse(`is not a ${kind} call`);
    }
  };

  const settle = async (t: VaultTransactionRecord, timeoutMs: number): Promise<VaultTransactionRecord> => {
    if (t.status !== 'pending') return t;
    let receipt: Awaited<ReturnType<ChainPublicClient['getTransactionReceipt']>> | undefined;
    try {
      receipt =
        timeoutMs > 0
          ? await chain.waitForTransactionReceipt({ hash: t.txHash as Hex, timeout: timeoutMs })
          : await chain.getTransactionReceipt({ hash: t.txHash as Hex });
    } catch {
      return t; // not mined yet (or the node is slow): still pending
    }
    const status: VaultTransactionStatus = receipt.status === 'success' ? 'mined' : 'reverted';
    const blockNumber = Number(receipt.blockNumber);
    await setVaultTransactionStatus(db, t.txHash, status, blockNumber, now());
    return { ...t, status, blockNumber };
  };

  return {
    async prepare(kind: VaultTransactionKind, input: { address: string; amount: string }, caller: AuthKey): Promise<PreparedVaultTransaction> {
      const wallet = walletOf(caller);
      if (input.address.toLowerCase() !== wallet) throw new ValidationError('address', 'must be the wallet of the API key');
      const amount = parseDecimal(input.amount, { field: 'amount', decimals: COLLATERAL_DECIMALS });
      const from = getAddress(wallet);
      const to = target(kind);
      const data = calldata(kind, amount);
      try {
        if (kind === 'deposit') {
          const [balance, allowance] = await Promise.all([
            chain.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [from] }),
            chain.readContract({ address: token, abi: erc20Abi, functionName: 'allowance', args: [from, vault] }),
          ]);
          if (balance < amount) throw new ValidationError('amount', `the wallet holds ${formatDecimal(balance, COLLATERAL_DECIMALS)} of the collateral token`);
          if (allowance < amount) throw new ValidationError('amount', `the margin vault is approved for ${formatDecimal(allowance, COLLATERAL_DECIMALS)} only: approve first (approve/prepare)`);
        }
        const [nonce, fees, estimate] = await Promise.all([
          chain.getTransactionCount({ address: from, blockTag: 'pending' }),
          chain.estimateFeesPerGas(),
          chain.estimateGas({ account: from, to, data }).catch((err) => {
            // A deposit prepared while its approve is still pending cannot be estimated yet.
            if (kind === 'deposit') return (DEPOSIT_GAS_BOUND * 100n) / GAS_HEADROOM_PERCENT;
            throw err;
          }),
        ]);
        return {
          transaction: {
            type: 'eip1559',
            chainId: opts.chainId,
            from,
            to,
            data,
            value: '0',
            nonce,
            gas: ((estimate * GAS_HEADROOM_PERCENT + 99n) / 100n).toString(),
            maxFeePerGas: fees.maxFeePerGas.toString(),
            maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
          },
          kind,
          amount: formatDecimal(amount, COLLATERAL_DECIMALS),
          marginVault: vault,
        };
      } catch (err) {
        throw toChainError(err);
      }
    },

    async submit(kind: VaultTransactionKind, input: { signedTransaction: string }, caller: AuthKey): Promise<VaultTransactionView> {
      const wallet = walletOf(caller);
      const raw = input.signedTransaction;
      if (!isHex(raw, { strict: true }) || raw.length < 4) throw refuse('must be the signed transaction in hex');
      let tx: ReturnType<typeof parseTransaction>;
      try {
        tx = parseTransaction(raw);
      } catch {
        throw refuse('is not a signed transaction');
      }
      if (tx.type !== 'eip1559') throw refuse('must be an EIP-1559 transaction (type 2)');
      if (tx.chainId !== opts.chainId) throw refuse(`is for chain ${tx.chainId}, not ${opts.chainId}`);
      if (tx.r === undefined || tx.s === undefined) throw refuse('is not signed');
      if (tx.to === undefined || tx.to === null || getAddress(tx.to) !== target(kind)) {
        throw refuse(`must be sent to the ${kind === 'approve' ? 'collateral token' : 'margin vault'} ${target(kind)}`);
      }
      if ((tx.value ?? 0n) !== 0n) throw refuse('must carry no value');
      const amount = decodeAmount(kind, tx.data);
      if (amount === 0n) throw refuse(`${kind}s nothing`);
      let signer: Address;
      try {
        signer = await recoverTransactionAddress({ serializedTransaction: raw as Parameters<typeof recoverTransactionAddress>[0]['serializedTransaction'] });
      } catch {
        throw refuse('has no valid signature');
      }
      if (signer.toLowerCase() !== wallet) throw refuse('is not signed by the wallet of the API key');
      const txHash = keccak256(raw);
      const known = await getVaultTransaction(db, txHash);
      if (known) return view(await settle(known, waitMs));
      try {
        await chain.sendRawTransaction({ serializedTransaction: raw });
      } catch (err) {
        // Sent before by someone else (the wallet itself): follow it like ours.
        if (!(err instanceof Error && /already known|already imported/i.test(err.message))) throw nodeRefusal(err);
      }
      const t = now();
      const record: VaultTransactionRecord = {
        txHash, kind, account: wallet, amount, apiKey: caller.apiKey, nonce: tx.nonce ?? 0, status: 'pending', blockNumber: null, submittedAt: t, updatedAt: t,
      };
      await insertVaultTransaction(db, record);
      return view(await settle(record, waitMs));
    },

    async get(kind: VaultTransactionKind, txHash: string, caller: AuthKey): Promise<VaultTransactionView> {
      const wallet = walletOf(caller);
      const t = await getVaultTransaction(db, txHash);
      if (!t || t.account !== wallet || t.kind !== kind) throw new NotFoundError('transaction');
      return view(await settle(t, 0));
    },
  };
}

export type VaultTransactionService = ReturnType<typeof createVaultTransactionService>;
