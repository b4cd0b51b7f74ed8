import type { PerpTransport } from '../../perp-transport.ts';
import type { BuildWithdrawalBody, SessionSigner, SignedWithdrawal } from '../../../perp-types.ts';
import type { TypedDataSigner } from '../../../signer-types.ts';
import { TokexValidationError } from '../../../errors.ts';
import { buildWithdrawal, type BuildWithdrawalErrorType } from './build-withdrawal.ts';

export type SignWithdrawalParameters = BuildWithdrawalBody & {
  /** The wallet the API key is bound to (a viem account or any eth_signTypedData_v4 signer); never a One-Click session key. */
  wallet: TypedDataSigner;
  retries?: number;
  retryDelayMs?: number;
};
export type SignWithdrawalReturnType = SignedWithdrawal;
export type SignWithdrawalErrorType = BuildWithdrawalErrorType | TokexValidationError | Error;

/** Collateral (USDC) units of a USD amount: 6 decimals, as the vault counts them; undefined for a malformed amount. */
function usdcUnits(amount: string): bigint | undefined {
  const m = /^(\d+)(?:\.(\d{1,6}))?$/.exec(amount);
  return m ? BigInt(m[1] + (m[2] ?? '').padEnd(6, '0')) : undefined;
}

/** A signer `startOneClickSession` or `newSessionSigner` made: it trades for the wallet and never withdraws. */
export function isSessionSigner(signer: TypedDataSigner): signer is SessionSigner {
  return typeof (signer as Partial<SessionSigner>).expiresAt === 'number';
}

/**
 * A withdrawal signed by the wallet: `account/withdrawals/build`, checks that the typed data is the
 * withdrawal asked for (this transport's chain, the wallet as account and recipient, the amount,
 * the deadline when given), then the wallet signs it (no transaction, no gas). Answers the body
 * `POST account/withdrawals` takes (`submitWithdrawal`) and the vault's `withdrawalId`.
 *
 * The vault pays only against the wallet's own signature: a One-Click session signer is refused
 * here before anything is sent, and any other key than the wallet after the build, before signing.
 */
export async function signWithdrawal(transport: PerpTransport, parameters: SignWithdrawalParameters): Promise<SignWithdrawalReturnType> {
  const { wallet, amount, clientWithdrawalId, deadline } = parameters;
  if (isSessionSigner(wallet)) {
    throw new TokexValidationError('wallet', 'a One-Click session key cannot sign a withdrawal (it trades, it never withdraws): sign with the wallet the API key is bound to');
  }
  const built = await buildWithdrawal(transport, { amount, clientWithdrawalId, deadline, retries: parameters.retries, retryDelayMs: parameters.retryDelayMs });
  const { domain, message: m } = built.typedData;
  if (String(domain.chainId) !== String(transport.chainId)) throw new Error(`perp API serves chain ${domain.chainId}, not ${transport.chainId}`);
  const account = String(m.account).toLowerCase();
  if (account !== wallet.address.toLowerCase()) {
    throw new TokexValidationError('wallet', `${wallet.address} is not the wallet the API key is bound to (${String(m.account)}): only that wallet signs its withdrawals`);
  }
  const units = usdcUnits(amount);
  if (
    built.typedData.primaryType !== 'Withdrawal' ||
    String(m.recipient).toLowerCase() !== account ||
    units === undefined ||
    String(m.amount) !== units.toString() ||
    String(m.withdrawalId).toLowerCase() !== built.withdrawalId.toLowerCase() ||
    (deadline !== undefined && String(m.deadline) !== String(deadline)) ||
    !/^\d+$/.test(String(m.deadline))
  ) {
    throw new Error('account/withdrawals/build answered another withdrawal than the one asked; not signed');
  }
  const signature = await wallet.signTypedData(built.typedData);
  return { amount, clientWithdrawalId, deadline: Number(m.deadline), signature, withdrawalId: built.withdrawalId };
}
