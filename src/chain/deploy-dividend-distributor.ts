/**
 * The dividend distributor's part of the stock venue's deployment (deploy-stock-venue.ts calls it
 * inside its batch; docs/corporate-actions.md): the DividendDistributor, owned by the deployer, with every operator
 * of the venue made one of the distributor's (the executor pays dividends with its own key), and,
 * in a demo deployment, a cash reserve minted to each operator but the deployer so that it can fund them.
 */
import { parseUnits, type Abi, type Address } from 'viem';
import { cashTokenAbi, dividendDistributorAbi } from './abi/generated/index.ts';

/**
 * What this part uses of the deployment's batch (deploy-tx-batch.ts's TxBatch, which is passed in):
 * named here, structurally: this part needs no more of the batch than these.
 */
export interface DividendDeployBatch {
  readonly from: Address;
  deployProxy(label: string, contract: 'DividendDistributor', ctorArgs: readonly unknown[], initArgs: readonly unknown[]): Promise<Address>;
  call(label: string, to: Address, abi: Abi, functionName: string, args: readonly unknown[]): Promise<void>;
}

/** USDC minted to each extra operator of a demo deployment, to fund dividends with. */
export const DEMO_DIVIDEND_RESERVE = parseUnits('1000000', 6);

export async function queueDividendDistributor(
  tx: DividendDeployBatch,
  params: {
    /** Every operator of the venue (the executor's address; the deployer only when a fixture asks). */
    operators: readonly Address[];
    cashToken: Address;
    /** A demo deployment: mint {@link DEMO_DIVIDEND_RESERVE} to each operator but the deployer. */
    demo: boolean;
    /** The proxy's upgrade authority. Default: the deployer. */
    upgrader?: Address;
  },
): Promise<Address> {
  const distributor = await tx.deployProxy('DividendDistributor', 'DividendDistributor', [], [tx.from, params.upgrader ?? tx.from]);
  const seen = new Set<string>();
  for (const operator of params.operators) {
    if (seen.has(operator.toLowerCase())) continue;
    seen.add(operator.toLowerCase());
    await tx.call('distributor.setOperator', distributor, dividendDistributorAbi, 'setOperator', [operator, true]);
    if (params.demo && operator.toLowerCase() !== tx.from.toLowerCase()) {
      await tx.call('mint dividend reserve', params.cashToken, cashTokenAbi, 'mint', [operator, DEMO_DIVIDEND_RESERVE]);
    }
  }
  return distributor;
}
