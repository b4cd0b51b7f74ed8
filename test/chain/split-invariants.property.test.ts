/**
 * Property test of a split's invariants on the real Stock and StockRouter (anvil): random holdings
 * (wallet, free and locked exchange balances of several holders, an open sell and an open buy) and
 * a random ratio, forward or reverse. After the split:
 *   every balance is its base units × the new multiplier, rounded down: the exact `balance × ratio`
 *   rounded down, or one unit less (value kept to one unit of the new shares, in the venue's favour);
 *   the total supply is the old one × the multiplier, rounded down (exactly × the ratio for a whole one);
 *   the Stock contract still backs every exchange balance;
 *   the open sell fills completely at its restated limit and releases its lock to the unit, and the
 *   open buy never pays more than it locked.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keccak256, stringToHex, type Address, type Hex } from 'viem';
import { stockAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { startChainFixture, type ChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { approveStock, confirm, depositUsdc, mUsdOf, OrderStatus, price, routerCall, settle, shares, Side, stockOf, usdc } from './chain-test-helpers.ts';

const ONE = 10n ** 36n;
let f: ChainFixture;
let aapl: Address;
let router: Address;
let base: Hex;
let run = 0;

beforeAll(async () => {
  f = await startChainFixture();
  aapl = f.deployment.contracts.stocks.AAPL;
  router = f.deployment.contracts.stockRouter;
  for (const u of f.users.slice(0, 3)) await approveStock(f, u, aapl, 2n ** 255n);
  base = await f.snapshot();
});
afterAll(async () => {
  await f?.stop();
});

const send = (user: ChainUser, address: Address, abi: readonly unknown[], functionName: string, args: readonly unknown[]) =>
  confirm(f, user.wallet.writeContract({ address, abi, functionName, args } as never));

const place = async (user: ChainUser, args: readonly unknown[]): Promise<bigint> => (await routerCall<bigint>(f, user, 'placeLimitOrder', args)).result;

const read = (functionName: string, args: readonly unknown[] = []) =>
  f.publicClient.readContract({ address: aapl, abi: stockAbi, functionName, args } as never) as Promise<bigint>;

describe('a split conserves every holding on chain', () => {
  it('property: balances and supply scale by the multiplier, rounded down; open orders settle within their locks', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          // Units of 1e-6 share: fractional holdings make the rounding visible.
          transfers: fc.array(fc.bigInt({ min: 1n, max: 30_000_000n }), { minLength: 2, maxLength: 2 }),
          deposit: fc.bigInt({ min: 2_000_000n, max: 40_000_000n }),
          sellMicro: fc.bigInt({ min: 1n, max: 1_000_000n }),
          limitCents: fc.bigInt({ min: 100n, max: 99_999n }),
          numerator: fc.integer({ min: 1, max: 12 }),
          denominator: fc.integer({ min: 1, max: 12 }),
        }).filter((r) => r.numerator !== r.denominator),
        async (r) => {
          await f.revert(base);
          base = await f.snapshot();
          const [alice, bob, carol] = f.users;
          const micro = 10n ** 12n;
          // Bob and Carol get odd amounts from Alice; Bob deposits part into the exchange and rests a sell.
          await send(alice, aapl, stockAbi, 'transfer', [bob.address, r.transfers[0] * micro]);
          await send(alice, aapl, stockAbi, 'transfer', [carol.address, r.transfers[1] * micro]);
          const deposit = r.deposit * micro;
          await send(bob, router, stockRouterAbi, 'depositStock', [aapl, deposit]);
          const sellQty = (deposit * r.sellMicro) / 1_000_000n;
          const limit = r.limitCents * 10n ** 16n;
          const sell = sellQty > 0n ? await place(bob, [aapl, Side.Sell, sellQty, limit, 0, 2 ** 32 - 1]) : undefined;
          await depositUsdc(f, carol, usdc('50000'));
          const buy = await place(carol, [aapl, Side.Buy, shares('3'), price('150.01'), 0, 2 ** 32 - 1]);
          const buyLock = (await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'getOrder', args: [buy] })).locked;

          const holders = [alice, bob, carol].map((u) => u.address);
          const before = await Promise.all(holders.map((h) => stockOf(f, aapl, h)));
          const supply = await read('totalSupply');
          const num = BigInt(r.numerator);
          const den = BigInt(r.denominator);
          await confirm(f, f.operator.writeContract({ address: aapl, abi: stockAbi, functionName: 'split', args: [num, den, keccak256(stringToHex(`prop-${run++}`))] }));
          const m = (ONE * num) / den;
          expect(await read('multiplier')).toBe(m);

          // Before the first split base units and shares are equal: each balance is base × m, rounded down.
          const after = await Promise.all(holders.map((h) => stockOf(f, aapl, h)));
          holders.forEach((_, i) => {
            for (const k of ['wallet', 'exchange', 'locked'] as const) {
              expect(after[i][k]).toBe((before[i][k] * m) / ONE);
              // Value at the split price (price × den / num) is kept to one unit of the new shares,
              // never in the holder's favour: the balance is the exact quotient rounded down, or one
              // less when the ratio does not divide 1e36 (1:3, 2:7) and the quotient is whole.
              const exact = (before[i][k] * num) / den;
              expect(after[i][k] <= exact && exact - after[i][k] <= 1n).toBe(true);
            }
          });
          expect(await read('totalSupply')).toBe((supply * m) / ONE);
          if (r.numerator % r.denominator === 0) expect(await read('totalSupply')).toBe((supply * num) / den);
          // The contract backs the exchange balances (its own shares are the same rounding of their base sum).
          const held = await read('balanceOf', [aapl]);
          const exchange = after.reduce((s, b) => s + b.exchange + b.locked, 0n);
          expect(held).toBeGreaterThanOrEqual(exchange);
          expect(held - exchange).toBeLessThan(BigInt(holders.length * 2));

          // The open sell fills completely at its restated limit (rounded up) and leaves no lock behind.
          if (sell !== undefined) {
            const o = await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'getOrder', args: [sell] });
            expect(o.quantity).toBe((sellQty * m) / ONE);
            expect(o.price).toBe((limit * ONE + m - 1n) / m);
            if (o.quantity > 0n) {
              await settle(f, [{ orderId: sell, quantity: o.quantity, price: o.price }], [{ orderId: sell, status: OrderStatus.Filled }]);
            } else {
              await settle(f, [], [{ orderId: sell, status: OrderStatus.Canceled }]);
            }
            expect((await stockOf(f, aapl, bob.address)).locked).toBe(0n);
          }
          // The open buy fills whole at its restated limit (rounded down) within its unchanged cash lock.
          const b = await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'getOrder', args: [buy] });
          expect(b.locked).toBe(buyLock);
          expect(b.price).toBe((price('150.01') * ONE) / m);
          await settle(f, [{ orderId: buy, quantity: b.quantity, price: b.price }], [{ orderId: buy, status: OrderStatus.Filled }]);
          expect((await mUsdOf(f, carol.address)).locked).toBe(0n);
        },
      ),
      { numRuns: 12 },
    );
  }, 240_000);
});
