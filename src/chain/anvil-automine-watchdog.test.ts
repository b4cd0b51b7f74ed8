/**
 * The automine watchdog (anvil-process.ts watchAutomine) against a local JSON-RPC server that
 * answers as anvil does: anvil's own bug (a ready transaction left unmined under automine,
 * foundry-rs/foundry#10122) cannot be produced on demand, so the server plays the node's side.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { watchAutomine } from './anvil-process.ts';

interface NodeState {
  pending: number;
  block: number;
  automine: boolean;
  /** A node whose blocks keep coming: each read of the block number finds a new one. */
  advancing?: boolean;
  /** Each method asked, in order. */
  calls: string[];
}

async function fakeNode(state: NodeState): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const { method, id } = JSON.parse(body) as { method: string; id: number };
      state.calls.push(method);
      const result =
        method === 'txpool_status' ? { pending: `0x${state.pending.toString(16)}`, queued: '0x0' }
        : method === 'eth_blockNumber' ? `0x${(state.advancing ? ++state.block : state.block).toString(16)}`
        : method === 'anvil_getAutomine' ? state.automine
        : method === 'evm_mine' ? ((state.block += 1), (state.pending = 0), '0x0')
        : null;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id, result }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** Waits until `n` pool checks have been answered. */
async function checks(state: NodeState, n: number): Promise<void> {
  while (state.calls.filter((c) => c === 'txpool_status').length < n) await new Promise((r) => setTimeout(r, 5));
}

describe('the automine watchdog', () => {
  const cleanup: Array<() => unknown> = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });
  const watch = async (state: NodeState) => {
    const node = await fakeNode(state);
    cleanup.push(() => node.close());
    const warnings: unknown[] = [];
    cleanup.push(watchAutomine(node.url, { warn: (o: unknown) => warnings.push(o) }, 10));
    return warnings;
  };

  it('mines a block once a ready transaction sat through two checks with no block between, under automine', async () => {
    const state: NodeState = { pending: 1, block: 7, automine: true, calls: [] };
    const warnings = await watch(state);
    await checks(state, 4);
    expect(state.calls.filter((c) => c === 'evm_mine')).toHaveLength(1);
    expect(warnings).toEqual([{ pending: 1, block: 7 }]);
    expect(state.block).toBe(8);
  });

  it('leaves the pool alone while automine is off (transactions held on purpose)', async () => {
    const state: NodeState = { pending: 2, block: 3, automine: false, calls: [] };
    const warnings = await watch(state);
    await checks(state, 6);
    expect(state.calls).not.toContain('evm_mine');
    expect(warnings).toEqual([]);
  });

  it('does nothing while blocks are mined or nothing is ready', async () => {
    const moving: NodeState = { pending: 1, block: 1, automine: true, advancing: true, calls: [] };
    const empty: NodeState = { pending: 0, block: 1, automine: true, calls: [] };
    await watch(empty);
    await checks(empty, 6);
    expect(empty.calls).not.toContain('evm_mine');
    expect(empty.calls).not.toContain('anvil_getAutomine');
    // A new block at every check: automine is working, however many transactions are ready.
    await watch(moving);
    await checks(moving, 6);
    expect(moving.calls).not.toContain('evm_mine');
  });
});
