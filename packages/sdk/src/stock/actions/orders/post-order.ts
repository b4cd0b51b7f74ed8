import { splitSendOptions, type SendOptions, type StockTransport } from '../../stock-transport.ts';
import type { StockOrderInput } from '../../../stock-types.ts';
import { validateStockOrder } from './validate-stock-order.ts';

/**
 * The four order-placing POSTs: the order is checked first unless the transport's `validateOrders`
 * is off; a One Click send (`relayed`) goes under an Idempotency-Key, a fresh one unless given.
 */
export async function postOrder<T>(transport: StockTransport, path: string, parameters: StockOrderInput & SendOptions, relayed: boolean): Promise<T> {
  const [order, key] = relayed ? splitSendOptions(parameters) : [parameters, {}];
  if (transport.validateOrders) validateStockOrder(order);
  return transport.call<T>('POST', path, { body: order, ...key });
}
