import { describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import type { AuthKey } from '../../auth/api-key-service.ts';
import { AppError, ValidationError } from '../../errors/app-error.ts';
import { createRelaySignals } from '../relay-signals.ts';
import type { StockApiDeps, StockChainReader } from '../stock-deps.ts';
import { createOneClickService, intrinsicGas, parseGasLimit } from './one-click-service.ts';

const RELAYER = '0x14dC79964da2C08b23698B3D3cc7Ca32193d9955' as Address;
const USER = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8' as Address;
const key = { apiKey: 'k', userAddress: USER } as unknown as AuthKey;

/** The service over a chain whose reads the test decides; nothing reaches a database. */
function service(chain: Partial<StockChainReader>) {
  const deps = {
    chainId: 31337,
    contracts: { oneClickRouter: '0x0000000000000000000000000000000000000011', stockRouter: '0x0000000000000000000000000000000000000012' },
    chain: {
      oneClick: async () => ({ status: 'enabled', delegatee: RELAYER }),
      gasFunds: async () => ({ balance: 10n ** 18n, maxFeePerGas: 1n }),
      estimateGas: async () => 100_000n,
      ...chain,
    },
    oneClick: { relayer: RELAYER, signals: createRelaySignals(), waitMs: 10, pollMs: 5 },
  } as unknown as StockApiDeps;
  return createOneClickService(deps);
}

async function refusal(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    return err as AppError;
  }
  throw new Error('expected a refusal');
}

describe('one click service', () => {
  it('intrinsic gas: 21,000 plus 16 per non-zero and 4 per zero calldata byte', () => {
    expect(intrinsicGas('0x')).toBe(21_000n);
    expect(intrinsicGas('0x00ff0001')).toBe(21_000n + 4n + 16n + 4n + 16n);
  });

  it('gasLimit: a positive integer or its decimal string, at most a block', () => {
    expect(parseGasLimit(undefined)).toBeUndefined();
    expect(parseGasLimit(60_000)).toBe(60_000n);
    expect(parseGasLimit('60000')).toBe(60_000n);
    for (const bad of ['1e6', '-1', '0', 1.5, true, '030000']) expect(() => parseGasLimit(bad)).toThrow(ValidationError);
    expect(() => parseGasLimit(30_000_001)).toThrow('gasLimit: at most 30000000');
  });

  it('answers the delegation first, then the send\'s own check, then the estimate', async () => {
    const notEnabled = service({ oneClick: async () => ({ status: 'disabled', delegatee: '0x0000000000000000000000000000000000000000' as Address, expiresAt: 0 }) });
    const failingCheck = Promise.reject(new ValidationError('quantity', 'exceeds the available exchangeBalance 0'));
    const e1 = await refusal(notEnabled.relay(key, USER, { kind: 'order', routerCalldata: '0x01', checks: [failingCheck] }));
    expect(e1.message).toBe(`oneClick: not enabled for ${USER}: enable it with 1ct/prepare and 1ct/enable first`);
    const reverting = service({ estimateGas: async () => Promise.reject(new ValidationError('x', 'never shown')) });
    const e2 = await refusal(reverting.relay(key, USER, { kind: 'order', routerCalldata: '0x01', checks: [Promise.reject(new ValidationError('quantity', 'too much'))] }));
    expect(e2.message).toBe('quantity: too much');
  });

  it('a node that refuses the estimate for want of funds answers the relayer\'s 503, as the funds check does', async () => {
    const s = service({ estimateGas: async () => Promise.reject(new AppError('INTERNAL', 'chain: transaction rejected by the node', { detail: { reason: 'InsufficientFundsError' } })) });
    const e = await refusal(s.relay(key, USER, { kind: 'order', routerCalldata: '0x01' }));
    expect([e.code, e.message]).toEqual(['CHAIN_UNAVAILABLE', 'relayer: cannot pay for gas (its ETH balance is too low); nothing was sent']);
    const poor = service({ gasFunds: async () => ({ balance: 149_999n, maxFeePerGas: 1n }) });
    const e2 = await refusal(poor.relay(key, USER, { kind: 'order', routerCalldata: '0x01' }));
    // 100,000 × 1.5 = 150,000 gas at 1 wei: one wei short.
    expect(e2.message).toBe('relayer: cannot pay for gas (its ETH balance is too low); nothing was sent');
  });
});
