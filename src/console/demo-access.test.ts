import { describe, expect, it } from 'vitest';
import { isLoopbackAddress, mayRevealDemoCredentials, runsOwnAnvil } from './demo-access.ts';

describe('demo credential rule', () => {
  it('knows loopback peers in every form a socket reports them', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::FFFF:127.0.0.5']) expect(isLoopbackAddress(a), a).toBe(true);
    for (const a of [undefined, '', '192.0.2.7', '10.0.0.1', '::ffff:192.0.2.7', '128.0.0.1', '::2', 'fe80::1', 'localhost', '127.0.0.1.evil', '0.0.0.0', '::']) expect(isLoopbackAddress(a), String(a)).toBe(false);
  });

  it('runs its own anvil exactly when RPC_URL is unset or empty', () => {
    expect(runsOwnAnvil({})).toBe(true);
    expect(runsOwnAnvil({ rpcUrl: '' })).toBe(true);
    expect(runsOwnAnvil({ rpcUrl: 'http://127.0.0.1:8545' })).toBe(false);
  });

  it('reveals only to a loopback peer of a demo stack on its own anvil', () => {
    const ok = { peerAddress: '127.0.0.1', ownAnvil: true, demoMode: true };
    expect(mayRevealDemoCredentials(ok)).toBe(true);
    expect(mayRevealDemoCredentials({ ...ok, peerAddress: '::1' })).toBe(true);
    expect(mayRevealDemoCredentials({ ...ok, peerAddress: '192.0.2.7' })).toBe(false);
    expect(mayRevealDemoCredentials({ ...ok, peerAddress: undefined })).toBe(false);
    expect(mayRevealDemoCredentials({ ...ok, ownAnvil: false })).toBe(false);
    expect(mayRevealDemoCredentials({ ...ok, demoMode: false })).toBe(false);
  });
});
