import type { PerpTransport, PerpRequestErrorType } from '../../perp-transport.ts';
import type { TransactionSigner, VaultTransaction } from '../../../perp-types.ts';
import { TokexTimeoutError } from '../../../errors.ts';
import { listDeposits } from '../account/list-deposits.ts';
import { vaultTransaction } from './vault-transaction.ts';

export type DepositCollateralParameters = { wallet: TransactionSigner; amount: string; timeoutMs?: number; onWait?: (state: string) => void };
export type DepositCollateralReturnType = VaultTransaction;
export type DepositCollateralErrorType = PerpRequestErrorType | TokexTimeoutError | Error;

/**
 * Approves the margin vault for `amount` of collateral and deposits it, each through the API's
 * prepare → sign → submit; then waits until the engine has credited the deposit (the perp indexer
 * follows the vault after PERP_CONFIRMATIONS blocks).
 */
export async function depositCollateral(transport: PerpTransport, parameters: DepositCollateralParameters): Promise<DepositCollateralReturnType> {
  const { wallet, amount, onWait } = parameters;
  onWait?.('approving');
  const approve = await vaultTransaction(transport, { wallet, kind: 'approve', amount });
  if (approve.status !== 'mined') throw new Error(`approve ${approve.txHash} is ${approve.status}`);
  onWait?.('depositing');
  const deposit = await vaultTransaction(transport, { wallet, kind: 'deposit', amount });
  if (deposit.status !== 'mined') throw new Error(`deposit ${deposit.txHash} is ${deposit.status}`);
  const until = Date.now() + (parameters.timeoutMs ?? 30_000);
  for (;;) {
    const list = await listDeposits(transport, { limit: 100 });
    const row = list.rows.find((d) => d.txHash.toLowerCase() === deposit.txHash.toLowerCase());
    if (row?.status === 'CREDITED') return deposit;
    // The engine will never credit it (docs/perp-api.md): waiting longer changes nothing.
    if (row?.status === 'REFUSED') throw new Error(`deposit ${deposit.txHash} refused by the venue${row.reason ? `: ${row.reason}` : ''}`);
    if (Date.now() > until) throw new TokexTimeoutError(`deposit ${deposit.txHash} not credited yet`, row?.status ?? 'waiting for the indexer');
    onWait?.(row?.status ?? 'waiting for the indexer');
    await new Promise((r) => setTimeout(r, 200));
  }
}
