import type { StockTransport, StockRequestErrorType } from '../../stock-transport.ts';
import type { OneClickEnabled } from '../../../stock-types.ts';
import type { AnyTypedDataSigner } from '../../../signer-types.ts';
import { prepareOneClick } from './prepare-one-click.ts';
import { submitOneClick } from './submit-one-click.ts';

export type EnableOneClickParameters = { wallet: AnyTypedDataSigner; deadline?: number };
export type EnableOneClickReturnType = OneClickEnabled;
export type EnableOneClickErrorType = StockRequestErrorType | Error;

/**
 * Enables One Click for the key's bound wallet: `1ct/prepare`, the wallet signs the payload (no
 * transaction, no gas), `1ct/enable`. `deadline` (Unix seconds) defaults to ten minutes ahead.
 */
export async function enableOneClick(transport: StockTransport, parameters: EnableOneClickParameters): Promise<EnableOneClickReturnType> {
  const deadline = parameters.deadline ?? Math.floor(transport.now() / 1000) + 600;
  const prepared = await prepareOneClick(transport, { deadline });
  const signature = await parameters.wallet.signTypedData(prepared.signPayload);
  return submitOneClick(transport, { signature, deadline: prepared.deadline });
}
