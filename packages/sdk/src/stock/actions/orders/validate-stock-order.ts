import { TokexValidationError } from '../../../errors.ts';
import type { StockOrderInput } from '../../../stock-types.ts';

/** What the API's validation would refuse in an order, found before sending (contract.md §A Values). */
export function validateStockOrder(order: StockOrderInput): void {
  const side = String(order.side ?? '').toLowerCase();
  const type = String(order.type ?? '').toLowerCase();
  if (side !== 'buy' && side !== 'sell') throw new TokexValidationError('side', 'Buy or Sell');
  if (type !== 'market' && type !== 'limit') throw new TokexValidationError('type', 'Market or Limit');
  if (type === 'market' && side === 'buy' && (order.notional === undefined || order.notional === '')) throw new TokexValidationError('notional', 'required for a market buy');
  if (type === 'limit') {
    if (order.timeInForce === undefined) throw new TokexValidationError('timeInForce', 'required for a limit order (DAY)');
    if (String(order.timeInForce).toUpperCase() !== 'DAY') throw new TokexValidationError('timeInForce', 'only DAY is accepted');
    if (order.price === undefined || order.price === '') throw new TokexValidationError('price', 'required for a limit order');
  }
}
