import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { TransactionSigner, VaultTransaction } from '../../../perp-types.ts';
import { prepareApprove } from './prepare-approve.ts';
import { prepareDeposit } from './prepare-deposit.ts';
import { submitApprove } from './submit-approve.ts';
import { submitDeposit } from './submit-deposit.ts';

export type VaultTransactionParameters = { wallet: TransactionSigner; kind: 'approve' | 'deposit'; amount: string };
export type VaultTransactionReturnType = VaultTransaction;
export type VaultTransactionErrorType = PerpRequestErrorType;

/**
 * One vault transaction through the API: `approve/prepare` or `deposit/prepare` answers the
 * unsigned EIP-1559 transaction, the wallet signs it (the API never holds a key), and
 * `…/submit` checks it is that transaction, broadcasts it and answers once it is mined (or still
 * `pending` after the API's wait).
 */
export async function vaultTransaction(transport: PerpTransport, parameters: VaultTransactionParameters): Promise<VaultTransactionReturnType> {
  const { wallet, kind, amount } = parameters;
  const input = { address: wallet.address, amount };
  const prepared = kind === 'approve' ? await prepareApprove(transport, input) : await prepareDeposit(transport, input);
  const t = prepared.transaction;
  const signedTransaction = await wallet.signTransaction({
    type: 'eip1559',
    chainId: Number(t.chainId),
    to: t.to,
    data: t.data,
    value: BigInt(t.value),
    nonce: Number(t.nonce),
    gas: BigInt(t.gas),
    maxFeePerGas: BigInt(t.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(t.maxPriorityFeePerGas),
  });
  const submitted = kind === 'approve' ? await submitApprove(transport, { signedTransaction }) : await submitDeposit(transport, { signedTransaction });
  return submitted as unknown as VaultTransaction;
}
