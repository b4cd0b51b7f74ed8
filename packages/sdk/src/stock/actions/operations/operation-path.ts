/** The four cash and stock moves between the wallet and the exchange balance (operation-routes.ts registers each). */
export type OperationKind = 'cashDeposit' | 'cashWithdrawal' | 'stockDeposit' | 'stockWithdrawal';

const PATHS: Record<OperationKind, string> = {
  cashDeposit: '/api/v1/cash/deposits',
  cashWithdrawal: '/api/v1/cash/withdrawals',
  stockDeposit: '/api/v1/stock/deposits',
  stockWithdrawal: '/api/v1/stock/withdrawals',
};

/** The path of a move's routes: `…/calldata`, `…/send`, `…/tx`, the list, `…/{operationId}`. */
export function operationPath(operation: OperationKind): string {
  return PATHS[operation];
}
