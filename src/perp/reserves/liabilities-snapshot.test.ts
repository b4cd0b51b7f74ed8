import { describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import type { MarginSummary } from '../engine/engine-types.ts';
import { POOL_ACCOUNT } from '../engine/perp-engine.ts';
import { snapshotLiabilities } from './liabilities-snapshot.ts';
import { verify, proof } from './merkle-sum-tree.ts';

const engine = (accounts: Record<string, [equity: bigint, pending: bigint]>, lps: Record<string, bigint> = {}) => ({
  lastSeq: 42,
  lpValues: () => new Map(Object.entries(lps)),
  accountAddresses: () => Object.keys(accounts),
  marginSummary: (a: string) => {
    const x = accounts[a.toLowerCase()];
    return x ? ({ equity: x[0], pendingWithdrawals: x[1] } as MarginSummary) : undefined;
  },
  vaultFlows: (a: string) => (accounts[a.toLowerCase()] ? { deposited: 10n + BigInt(a.length), withdrawn: 3n } : undefined),
});

const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;

describe('snapshotLiabilities', () => {
  it('commits a negative account at 0, counts its debt apart, and the total is the sum of the rest', () => {
    const s = snapshotLiabilities(engine({ [addr(1)]: [5_000_000n, 1_000_000n], [addr(2)]: [-750_000n, 0n], [addr(3)]: [0n, 250_000n] }));
    expect(s.engineSeq).toBe(42);
    expect(s.badDebt).toBe(750_000n);
    expect(s.tree.total).toBe(6_250_000n);
    const negative = s.leaves.find((l) => l.account.toLowerCase() === addr(2))!;
    expect(negative).toMatchObject({ equity: 0n, pendingWithdrawals: 0n, badDebt: 750_000n });
    // The vault flows are committed as the engine knows them, whatever the equity.
    expect(negative).toMatchObject({ deposited: 52n, withdrawn: 3n });
    expect(s.leaves.map((l) => l.leafIndex)).toEqual([0, 1, 2]);
    for (const l of s.leaves) expect(verify(l, proof(s.tree, l.leafIndex), s.tree.root, s.tree.total)).toBe(true);
  });

  it('orders the leaves by address, whatever the salts (the order the registry checks and absence proofs rely on)', () => {
    const accounts = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [addr(16 - i), [BigInt(i + 1) * 1_000_000n, 0n] as [bigint, bigint]]));
    const salt = (a: string): Hex => `0x${(0xff - Number(BigInt(a))).toString(16).padStart(64, '0')}`;
    const a = snapshotLiabilities(engine(accounts), salt);
    expect(a.leaves.map((l) => l.account.toLowerCase())).toEqual(Array.from({ length: 16 }, (_, i) => addr(i + 1)));
    expect(a.leaves.map((l) => l.leafIndex)).toEqual(Array.from({ length: 16 }, (_, i) => i));
    expect(snapshotLiabilities(engine(accounts), salt).tree.root).toBe(a.tree.root);
  });

  it("puts each liquidity provider's share of the pool in its own leaf and leaves the pool only the dust", () => {
    const lp1 = addr(0x11);
    const lp2 = addr(0x22);
    const s = snapshotLiabilities(
      engine({ [POOL_ACCOUNT]: [1_000_000_003n, 0n], [lp1]: [200_000_000n, 0n], [lp2]: [0n, 0n] }, { [lp1]: 800_000_001n, [lp2]: 200_000_000n }),
    );
    const equity = (a: string) => s.leaves.find((l) => l.account.toLowerCase() === a)!.equity;
    expect(equity(lp1)).toBe(1_000_000_001n);
    expect(equity(lp2)).toBe(200_000_000n);
    expect(equity(POOL_ACCOUNT)).toBe(2n);
    // Nothing is counted twice or lost: the total is the pool's equity plus the providers' own.
    expect(s.tree.total).toBe(1_200_000_003n);
    expect(s.badDebt).toBe(0n);
  });
});
