/**
 * The CREATE2 factory a deterministic deployment goes through (deploy-deterministic-address.ts):
 * found on the chain, or put there with its presigned transaction.
 */
import type { Address } from 'viem';
import { toChainError, type ChainPublicClient, type ChainWalletClient } from './chain-client.ts';
import { CREATE2_FACTORY, CREATE2_FACTORY_DEPLOY_TX, CREATE2_FACTORY_SIGNER, type DeployNote } from './deploy-deterministic-address.ts';
import { TxBatch } from './deploy-tx-batch.ts';

/** What the presigned transaction costs its signer at most (gas × gas price): funded by the deployer. */
const CREATE2_FACTORY_DEPLOY_COST = 100_000n * 100_000_000_000n;

/**
 * The CREATE2 factory of the chain behind `publicClient`: present already, or deployed now with its
 * presigned transaction (offline: the transaction is a constant) after funding its signer from
 * `walletClient`. Answers undefined, with a note, when the chain has none and refuses that
 * transaction (a node that takes only EIP-155 transactions, a base fee above 100 gwei, the signer's
 * nonce used): the caller then deploys at nonce-derived addresses.
 */
export async function ensureCreate2Factory(params: {
  publicClient: ChainPublicClient;
  walletClient: ChainWalletClient;
  note?: DeployNote;
}): Promise<Address | undefined> {
  const { publicClient, walletClient, note } = params;
  const present = async () => {
    const code = await publicClient.getCode({ address: CREATE2_FACTORY });
    return code !== undefined && code !== '0x';
  };
  try {
    if (await present()) return CREATE2_FACTORY;
  } catch (err) {
    throw toChainError(err);
  }
  let reason: string;
  try {
    const [nonce, balance] = await Promise.all([
      publicClient.getTransactionCount({ address: CREATE2_FACTORY_SIGNER }),
      publicClient.getBalance({ address: CREATE2_FACTORY_SIGNER }),
    ]);
    if (nonce !== 0) {
      reason = `its signer's nonce 0 is used (nonce ${nonce}) without the factory at its address`;
    } else {
      if (balance < CREATE2_FACTORY_DEPLOY_COST) {
        const fund = await TxBatch.open(publicClient, walletClient);
        await fund.transfer('fund the CREATE2 factory\'s signer', CREATE2_FACTORY_SIGNER, CREATE2_FACTORY_DEPLOY_COST - balance);
        await fund.finish();
      }
      const hash = await publicClient.sendRawTransaction({ serializedTransaction: CREATE2_FACTORY_DEPLOY_TX });
      const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 60_000 });
      if (receipt.status === 'success' && (await present())) {
        note?.('info', 'the chain had no CREATE2 factory: deployed it with its presigned transaction', { factory: CREATE2_FACTORY, txHash: hash });
        return CREATE2_FACTORY;
      }
      reason = 'its presigned transaction reverted';
    }
  } catch (err) {
    reason = `its presigned transaction was refused: ${(err as Error).message.split('\n')[0].slice(0, 200)}`;
  }
  note?.('warn', `the chain has no CREATE2 factory at ${CREATE2_FACTORY} and ${reason}: the venue is deployed at nonce-derived addresses, which differ from the other chains'`, { factory: CREATE2_FACTORY });
  return undefined;
}
