/** The API's view of an indexed order (contract.md §A Values: state, openOrder, history). */
import { formatDecimal, mulDiv } from '../lib/decimal.ts';
import type { FillRecord, OrderRecord } from './store/stock-order-store.ts';
import { decimalOut, millis } from './stock-schemas.ts';
import type { StockDirectory } from './stock-deps.ts';

const D = 18;
const fmt = (v: string | bigint) => formatDecimal(BigInt(v), D);

export function orderState(status: OrderRecord['status']): 'open' | 'canceling' | 'history' {
  return status === 'Open' ? 'open' : status === 'Canceling' ? 'canceling' : 'history';
}

function averagePrice(filledNotional: bigint, filledQuantity: bigint): string | null {
  if (filledQuantity === 0n) return null;
  return fmt(mulDiv(filledNotional, 10n ** 18n, filledQuantity));
}

/** `reason`: why the executor closed it REJECTED or EXPIRED (src/stock/store/order-reason-store.ts), if it did. */
export function orderView(o: OrderRecord, fills: FillRecord[], stocks: StockDirectory, reason: string | null = null) {
  const state = orderState(o.status);
  const filledQuantity = BigInt(o.filledQuantity);
  const filledNotional = BigInt(o.filledNotional);
  const isMarketBuy = o.orderType === 'Market' && o.side === 'Buy';
  const fillRows = fills.map((f) => ({
    quantity: fmt(f.quantity),
    price: fmt(f.price),
    notional: fmt(f.notional),
    fee: fmt(f.fee),
    txHash: f.txHash,
    timestamp: f.timestamp,
  }));
  return {
    orderId: o.orderId,
    symbol: stocks.byAddress(o.stockAddress)?.symbol ?? null,
    stockAddress: o.stockAddress,
    userAddress: o.userAddress,
    side: o.side,
    type: o.orderType,
    state,
    timeInForce: o.orderType === 'Limit' ? 'DAY' : null,
    deadline: o.deadline,
    quantity: isMarketBuy ? null : fmt(o.quantity),
    notional: o.orderType === 'Market' && o.side === 'Sell' ? null : fmt(o.notional),
    price: o.orderType === 'Limit' ? fmt(o.price) : null,
    txHash: o.placeTxHash,
    cancelTxHash: o.cancelTxHash,
    createdAt: o.createdAt,
    updatedAt: o.updatedAt,
    fees: fmt(o.fees),
    fills: fillRows,
    ...(state === 'history'
      ? {
          history: {
            status: o.status.toUpperCase(),
            filledQuantity: fmt(filledQuantity),
            filledNotional: fmt(filledNotional),
            averagePrice: averagePrice(filledNotional, filledQuantity),
            fees: fmt(o.fees),
            fills: fillRows,
            settledAt: o.closedAt,
            settleTxHash: o.closeTxHash,
            reason: o.status === 'Rejected' || o.status === 'Expired' ? reason : null,
          },
        }
      : {
          openOrder: {
            status: o.status === 'Open' ? 'OPEN' : 'CANCELING',
            filledQuantity: fmt(filledQuantity),
            remainingQuantity: isMarketBuy ? null : fmt(BigInt(o.quantity) - filledQuantity),
            lockedAmount: fmt(o.locked),
          },
        }),
  };
}

const fillSchema = {
  type: 'object',
  required: ['quantity', 'price', 'notional', 'fee', 'txHash', 'timestamp'],
  properties: { quantity: decimalOut, price: decimalOut, notional: decimalOut, fee: decimalOut, txHash: { type: 'string' }, timestamp: millis },
} as const;

const nullableDecimal = { type: ['string', 'null'], description: 'exact decimal string, or null when it does not apply' } as const;

export const orderSchema = {
  type: 'object',
  required: ['orderId', 'symbol', 'stockAddress', 'userAddress', 'side', 'type', 'state', 'deadline', 'txHash', 'createdAt', 'updatedAt', 'fees', 'fills'],
  properties: {
    orderId: { type: 'string', description: 'decimal string of the on-chain order id' },
    symbol: { type: ['string', 'null'] },
    stockAddress: { type: 'string' },
    userAddress: { type: 'string' },
    side: { type: 'string', enum: ['Buy', 'Sell'] },
    type: { type: 'string', enum: ['Market', 'Limit'] },
    state: { type: 'string', enum: ['open', 'canceling', 'history'] },
    timeInForce: { type: ['string', 'null'], enum: ['DAY', null] },
    deadline: { type: 'integer', description: 'Unix seconds' },
    quantity: nullableDecimal,
    notional: nullableDecimal,
    price: nullableDecimal,
    txHash: { type: 'string' },
    cancelTxHash: { type: ['string', 'null'] },
    createdAt: millis,
    updatedAt: millis,
    fees: decimalOut,
    fills: { type: 'array', items: fillSchema },
    openOrder: {
      type: 'object',
      required: ['status', 'filledQuantity', 'lockedAmount'],
      properties: {
        status: { type: 'string', enum: ['OPEN', 'CANCELING'] },
        filledQuantity: decimalOut,
        remainingQuantity: nullableDecimal,
        lockedAmount: { ...decimalOut, description: 'mUSD for a buy, stock for a sell' },
      },
    },
    history: {
      type: 'object',
      required: ['status', 'filledQuantity', 'filledNotional', 'fees', 'fills'],
      properties: {
        status: { type: 'string', enum: ['FILLED', 'CANCELED', 'EXPIRED', 'REJECTED'] },
        filledQuantity: decimalOut,
        filledNotional: decimalOut,
        averagePrice: nullableDecimal,
        fees: decimalOut,
        fills: { type: 'array', items: fillSchema },
        settledAt: { type: ['integer', 'null'] },
        settleTxHash: { type: ['string', 'null'] },
        reason: {
          type: ['string', 'null'],
          description:
            'why the executor rejected or expired the order, e.g. `no fresh quote for AAPL within 60 s (a quote older than 30 s is not used)`; null for FILLED and CANCELED (docs/stock-api.md)',
        },
      },
    },
  },
} as const;
