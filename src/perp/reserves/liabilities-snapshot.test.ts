import { describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import type { MarginSummary } from '../engine/engine-types.ts';
import { snapshotLiabilities } from './liabilities-snapshot.ts';
import { verify, proof } from './merkle-sum-tree.ts';

const engine = (accounts: Record<string, [equity: bigint, pending: bigint]>) => ({
  lastSeq: 42,
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

  it('orders the leaves by their salts: a fresh order every epoch, deterministic for given salts', () => {
    const accounts = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [addr(i + 1), [BigInt(i + 1) * 1_000_000n, 0n] as [bigint, bigint]]));
    const orders = new Set<string>();
    for (let i = 0; i < 5; i++) orders.add(snapshotLiabilities(engine(accounts)).leaves.map((l) => l.account).join());
    expect(orders.size).toBeGreaterThan(1);
    // Salts given: the order follows them (descending addresses here), and the same input gives the same root.
    const salt = (a: string): Hex => `0x${(0xff - Number(BigInt(a))).toString(16).padStart(64, '0')}`;
    const a = snapshotLiabilities(engine(accounts), salt);
    expect(a.leaves[0].account.toLowerCase()).toBe(addr(16));
    expect(snapshotLiabilities(engine(accounts), salt).tree.root).toBe(a.tree.root);
  });
});
