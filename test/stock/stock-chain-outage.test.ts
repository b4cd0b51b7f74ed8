/**
 * The chain RPC goes away under a running API: reads that need the chain answer 503 in the
 * envelope, cached reads keep working, the process stays up, and everything recovers when the
 * chain comes back (anvil restarted on the same port from its dumped state).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';
import { ANVIL_ACCOUNTS } from '../../src/chain/anvil-accounts.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

let anvil: AnvilHandle;
let t: TestStack;
let stateFile: string;

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-outage-'));
  stateFile = path.join(dir, 'anvil-state.json');
  anvil = await startAnvil({ port: 0, stateFile });
  // An external chain: the stack deploys with the operator key and must not spawn its own anvil.
  t = await startTestStack({ RPC_URL: anvil.rpcUrl, OPERATOR_PRIVATE_KEY: ANVIL_ACCOUNTS[9].privateKey, DEMO_MODE: 'true' });
});

afterAll(async () => {
  await t?.stop();
  await anvil?.stop();
});

describe('chain RPC outage', () => {
  it('answers 503 while the chain is down and recovers when it returns', async () => {
    const user = t.demo.wallets[0].address;
    const ok = await t.readOnly.request('GET', `/api/v1/users/${user}/balance`);
    expect(ok.code).toBe(200);

    const port = anvil.port;
    await anvil.stop();

    const down = await t.readOnly.request('GET', `/api/v1/users/${user}/balance`);
    expect(down.httpStatus).toBe(503);
    expect(down).toMatchObject({ code: 503, errMsg: 'chain: RPC unavailable, try again later' });
    expect(down.uuid).toMatch(/^[0-9a-f-]{36}$/);
    // Cached chain context and off-chain data keep answering.
    expect((await t.readOnly.request('GET', '/api/v1/prices/AAPL')).code).toBe(200);
    expect((await t.readOnly.request('GET', '/api/v1/config')).code).toBe(200);

    anvil = await startAnvil({ port, stateFile });
    const back = await t.readOnly.request('GET', `/api/v1/users/${user}/balance`);
    expect(back.code).toBe(200);
    // The same chain state; the rows' `price` is the live quote, which moves meanwhile.
    const chainState = (d: any) => ({ ...d, tokenBalances: d.tokenBalances.map((b: any) => ({ ...b, price: typeof b.price })) });
    expect(chainState(back.data)).toEqual(chainState(ok.data));
  });
});
