/** Exact price arithmetic for tests and soaks that place resting perp orders (never `number`). */
import { formatUnits, parseUnits } from 'viem';

/**
 * A price `num/den` of `price`, rounded down onto `tickSize`: e.g. 9n/10n of the lowest bid, a
 * resting buy far enough below the book that it does not fill.
 */
export function fractionOnTick(price: string, tickSize: string, num: bigint, den: bigint): string {
  const decimals = (tickSize.split('.')[1] ?? '').length;
  const tick = parseUnits(tickSize, decimals);
  const scaled = (parseUnits(price, decimals) * num) / den;
  return formatUnits((scaled / tick) * tick, decimals);
}
