/**
 * `Idempotency-Key` on the sandbox's `POST /fund` (docs/sandbox.md) on the real stack: a retry under
 * the same key and body answers the first answer and mints nothing more (the balance on chain says
 * so), two at once mint once, the key with another body is 409, a failed attempt leaves its key free.
 */
import { describe, expect, it } from 'vitest';
import { erc20Abi } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { chainClients } from '../support/one-click-users.ts';
import { useSandboxStack } from './sandbox-client.ts';

describe('sandbox fund with Idempotency-Key', () => {
  const s = useSandboxStack();

  const usdcOf = (holder: `0x${string}`) => chainClients(s.t).pub.readContract({ address: s.t.demo.stock.contracts.cashToken, abi: erc20Abi, functionName: 'balanceOf', args: [holder] });
  const fresh = () => privateKeyToAccount(generatePrivateKey()).address;

  it('answers a retry with the first answer and mints once; another body under the key is 409', async () => {
    const holder = fresh();
    const body = { address: holder, asset: 'USDC', amount: '12.5' };
    const key = { 'idempotency-key': `fund-${holder}` };
    const first = await s.sb.call('POST', '/fund', body, key);
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(first.json.data).toMatchObject({ address: holder, asset: 'USDC', amount: '12.5', balance: '12.5' });

    const again = await s.sb.call('POST', '/fund', body, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.data).toEqual(first.json.data);
    expect(again.json.uuid).not.toBe(first.json.uuid);
    expect(await usdcOf(holder)).toBe(12_500_000n);

    const other = await s.sb.call('POST', '/fund', { ...body, amount: '13' }, key);
    expect([other.status, other.json.code, other.json.errMsg]).toEqual([409, 409, 'Idempotency-Key: already used by another request; use a new key for a new request']);
    expect(await usdcOf(holder)).toBe(12_500_000n);

    // Without a key each call is a new mint.
    await s.sb.ok('POST', '/fund', body);
    expect(await usdcOf(holder)).toBe(25_000_000n);
  });

  it('two attempts at once under one key mint once and answer the same', async () => {
    const holder = fresh();
    const body = { address: holder, asset: 'SPY', amount: '1.25' };
    const key = { 'idempotency-key': `race-${holder}` };
    const [a, b] = await Promise.all([s.sb.call('POST', '/fund', body, key), s.sb.call('POST', '/fund', body, key)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.json.data).toEqual(b.json.data);
    expect([a.headers.get('idempotent-replayed'), b.headers.get('idempotent-replayed')].sort()).toEqual(['true', null].sort());
    const spy = s.t.demo.stock.contracts.stocks.SPY;
    expect(await chainClients(s.t).pub.readContract({ address: spy, abi: erc20Abi, functionName: 'balanceOf', args: [holder] })).toBe(1_250_000_000_000_000_000n);
  });

  it('a failed attempt leaves its key free: the retry after the fault is cleared mints', async () => {
    const holder = fresh();
    const body = { address: holder, asset: 'USDC', amount: '3' };
    const key = { 'idempotency-key': `stalled-${holder}` };
    await s.sb.ok('POST', '/faults', { kind: 'chain-stall' });
    const refused = await s.sb.call('POST', '/fund', body, key);
    expect([refused.status, refused.json.code]).toEqual([409, 409]);
    await s.sb.ok('DELETE', '/faults');
    const retried = await s.sb.call('POST', '/fund', body, key);
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
    expect(retried.json.data).toMatchObject({ amount: '3', balance: '3' });
    expect(await usdcOf(holder)).toBe(3_000_000n);
  });

  it('refuses a malformed key 400 naming the header, minting nothing', async () => {
    const holder = fresh();
    for (const bad of ['x'.repeat(65), 'has space']) {
      expect(await s.sb.refusal('POST', '/fund', { address: holder, asset: 'USDC', amount: '1' }, { 'idempotency-key': bad })).toBe(
        'idempotency-key: must be 1 to 64 visible ASCII characters, sent once',
      );
    }
    expect(await usdcOf(holder)).toBe(0n);
  });
});
