/**
 * The SDK's withdrawal flow (`withdraw`, `signWithdrawal`, `buildWithdrawal`, `submitWithdrawal`)
 * against a real local node:http server that builds the typed data and checks the signature with the
 * server's own code (`withdrawalType`, `withdrawalIdOf` of src/perp/withdrawal-service.ts): the
 * wallet signs what the venue built, the POST carries exactly the signed fields, a retry resends the
 * one signed body, and a session key, another key, another chain or another withdrawal than the
 * one asked is refused before anything is signed.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PerpClient, TokexValidationError, type TypedDataSigner } from '@tokex/sdk';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { withdrawalIdOf, withdrawalType } from '../../src/perp/withdrawal-service.ts';

const ROOT = '/v4/public/trader/';
const VAULT = '0x00000000000000000000000000000000000000A1' as const;
const domain = { name: 'TokexPerp', version: '1', chainId: 31337, verifyingContract: VAULT };
const wallet = privateKeyToAccount(generatePrivateKey());

interface Seen {
  path: string;
  body: any;
}

/** What the fake venue does: the build it answers (tamperable) and the POST answers (503s first). */
let buildFor: (body: any) => { typedData: any; withdrawalId: string };
let unavailableFirst = 0;
let seen: Seen[] = [];
let server: http.Server;
let base = '';

const nowS = () => Math.floor(Date.now() / 1000);
const units = (amount: string) => {
  const [w, f = ''] = amount.split('.');
  return BigInt(w + f.padEnd(6, '0'));
};

/** What `account/withdrawals/build` answers for the key's wallet `account` (the service's own build). */
function honestBuild(account: string, over: { chainId?: number; recipient?: string; amount?: bigint; deadline?: number } = {}) {
  return (body: any) => {
    const withdrawalId = withdrawalIdOf(account, body.clientWithdrawalId);
    const message = {
      account,
      recipient: over.recipient ?? account,
      amount: over.amount ?? units(body.amount),
      withdrawalId,
      deadline: BigInt(over.deadline ?? body.deadline ?? nowS() + 86_400),
    };
    return { typedData: withdrawalType.build({ ...domain, chainId: over.chainId ?? domain.chainId }, message), withdrawalId };
  };
}

function answer(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const path = req.url!.slice(ROOT.length);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      seen.push({ path, body });
      if (path === 'account/withdrawals/build') return answer(res, 200, { code: 0, msg: 'ok', requestId: 'r-b', data: buildFor(body) });
      if (path === 'account/withdrawals') {
        if (unavailableFirst > 0) {
          unavailableFirst--;
          return answer(res, 503, { code: 50002, msg: 'engine: no answer', requestId: 'r-u', data: { outcome: 'unknown' } });
        }
        // The service's check: the wallet's own signature of exactly this request.
        const withdrawalId = withdrawalIdOf(wallet.address, body.clientWithdrawalId);
        const message = { account: wallet.address, recipient: wallet.address, amount: units(body.amount), withdrawalId, deadline: BigInt(body.deadline) };
        try {
          await withdrawalType.verifySigner(domain, message, body.signature, wallet.address, 'the wallet of the API key');
        } catch (err) {
          return answer(res, 400, { code: 10000, msg: (err as Error).message, requestId: 'r-s', data: { field: 'signature' } });
        }
        const row = { withdrawalId, clientWithdrawalId: body.clientWithdrawalId, address: wallet.address.toLowerCase(), asset: 'USDC', amount: body.amount, status: 'PENDING', txHash: null, blockNumber: null, reason: null, createdAt: 1, updatedAt: 1, duplicate: false };
        return answer(res, 200, { code: 0, msg: 'ok', requestId: 'r-w', data: row });
      }
      answer(res, 404, { code: 40000, msg: 'not here', requestId: 'r-n', data: {} });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
afterEach(() => {
  seen = [];
  unavailableFirst = 0;
});

const client = () => new PerpClient({ baseUrl: base, apiKey: 'key-1', apiSecret: 'secret-1', chainId: 31337, retry: { baseDelayMs: 5 } });

/** A signer that counts what it signs. */
function counting(signer: TypedDataSigner): TypedDataSigner & { signed: number } {
  const c = { address: signer.address, signed: 0, signTypedData: (td: any) => (c.signed++, signer.signTypedData(td)) };
  return c;
}

describe('withdraw: build, the wallet signs, POST', () => {
  it('signs what the venue built with the wallet; the POST is exactly amount, clientWithdrawalId, the signed deadline and the signature', async () => {
    buildFor = honestBuild(wallet.address);
    const w = await client().withdraw(wallet, { amount: '250.5', clientWithdrawalId: 'w-1' });
    expect(w).toMatchObject({ clientWithdrawalId: 'w-1', amount: '250.5', status: 'PENDING', withdrawalId: withdrawalIdOf(wallet.address, 'w-1') });
    expect(seen.map((s) => s.path)).toEqual(['account/withdrawals/build', 'account/withdrawals']);
    expect(seen[0].body).toEqual({ amount: '250.5', clientWithdrawalId: 'w-1' });
    const post = seen[1].body;
    expect(Object.keys(post).sort()).toEqual(['amount', 'clientWithdrawalId', 'deadline', 'signature']);
    expect(post).toMatchObject({ amount: '250.5', clientWithdrawalId: 'w-1' });
    // The default deadline the venue chose (a day ahead), as a number of unix seconds.
    expect(post.deadline).toBeGreaterThanOrEqual(nowS() + 86_400 - 5);
    expect(post.deadline).toBeLessThanOrEqual(nowS() + 86_400);
    expect(post.signature).toMatch(/^0x[0-9a-f]{130}$/);
  });

  it('a deadline asked is sent to build and signed; signWithdrawal and submitWithdrawal apart send the same', async () => {
    buildFor = honestBuild(wallet.address);
    const deadline = nowS() + 3_600;
    const api = client();
    const signed = await api.signWithdrawal(wallet, { amount: '1', clientWithdrawalId: 'w-2', deadline });
    expect(signed).toMatchObject({ amount: '1', clientWithdrawalId: 'w-2', deadline, withdrawalId: withdrawalIdOf(wallet.address, 'w-2') });
    expect(seen).toEqual([{ path: 'account/withdrawals/build', body: { amount: '1', clientWithdrawalId: 'w-2', deadline } }]);
    // The signed withdrawal as it is: its withdrawalId is not sent (the endpoint refuses other fields).
    await api.submitWithdrawal(signed);
    expect(seen[1].body).toEqual({ amount: '1', clientWithdrawalId: 'w-2', deadline, signature: signed.signature });
  });

  it('a retry resends the one signed body: built and signed once, the same signature every attempt', async () => {
    buildFor = honestBuild(wallet.address);
    unavailableFirst = 2;
    const signer = counting(wallet);
    const w = await client().withdraw(signer, { amount: '7', clientWithdrawalId: 'w-3' });
    expect(w.status).toBe('PENDING');
    expect(seen.map((s) => s.path)).toEqual(['account/withdrawals/build', 'account/withdrawals', 'account/withdrawals', 'account/withdrawals']);
    expect(seen[2].body).toEqual(seen[1].body);
    expect(seen[3].body).toEqual(seen[1].body);
    expect(signer.signed).toBe(1);
    // Without retries the unknown outcome is the caller's to resend.
    unavailableFirst = 1;
    await expect(client().withdraw(wallet, { amount: '7', clientWithdrawalId: 'w-3' }, { retries: 0 })).rejects.toMatchObject({ code: 50002 });
  });
});

describe('withdraw: refused before anything is signed', () => {
  it('a One-Click session signer: refused before any request', async () => {
    buildFor = honestBuild(wallet.address);
    const session = PerpClient.newSessionSigner(Date.now() + 3_600_000);
    const err = await client().withdraw(session, { amount: '1', clientWithdrawalId: 'w-s' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TokexValidationError);
    expect(err).toMatchObject({ field: 'wallet' });
    expect(String((err as Error).message)).toMatch(/One-Click session key cannot sign a withdrawal/);
    await expect(client().signWithdrawal(session, { amount: '1', clientWithdrawalId: 'w-s' })).rejects.toBeInstanceOf(TokexValidationError);
    expect(seen).toEqual([]);
  });

  it('a key that is not the wallet the API key is bound to: built, not signed, not sent', async () => {
    buildFor = honestBuild(wallet.address);
    const other = counting(privateKeyToAccount(generatePrivateKey()));
    const err = await client().withdraw(other, { amount: '1', clientWithdrawalId: 'w-o' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TokexValidationError);
    expect(String((err as Error).message)).toContain(`is not the wallet the API key is bound to (${wallet.address})`);
    expect(other.signed).toBe(0);
    expect(seen.map((s) => s.path)).toEqual(['account/withdrawals/build']);
  });

  it('typed data for another chain, another recipient, amount or deadline than asked: not signed, not sent', async () => {
    const signer = counting(wallet);
    const cases: Array<[Parameters<typeof honestBuild>[1], RegExp]> = [
      [{ chainId: 1 }, /perp API serves chain 1, not 31337/],
      [{ recipient: privateKeyToAccount(generatePrivateKey()).address }, /another withdrawal than the one asked/],
      [{ amount: 2_000_000n }, /another withdrawal than the one asked/],
      [{ deadline: nowS() + 7_200 }, /another withdrawal than the one asked/],
    ];
    for (const [over, message] of cases) {
      seen = [];
      buildFor = honestBuild(wallet.address, over);
      await expect(client().withdraw(signer, { amount: '1', clientWithdrawalId: 'w-t', deadline: nowS() + 3_600 }), JSON.stringify(over, (_, v) => (typeof v === 'bigint' ? String(v) : v))).rejects.toThrow(message);
      expect(seen.map((s) => s.path)).toEqual(['account/withdrawals/build']);
    }
    expect(signer.signed).toBe(0);
  });
});
