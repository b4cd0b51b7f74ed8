/**
 * The engine's messages written straight to JSON text (engine-gateway.ts `commandMessageText`,
 * `replyMessageText`, `eventMessageText`, what the Redis transport sends) are the very texts of the
 * message objects (`toCommandMessage` …) stringified, for every command, answer and event a real
 * engine produces: deposits, resting and crossing orders with their fills, partial fills, an amend,
 * cancels, refusals, a mark price and funding. A process of the previous release reads them as
 * before, and a process of this one reads the previous release's.
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors/app-error.ts';
import type { EngineCommand } from '../../src/perp/engine/engine-types.ts';
import {
  NONCE_CLAIM_PROTOCOL,
  commandMessageText,
  eventMessageText,
  fromCommandMessage,
  fromReplyMessage,
  replyMessageText,
  toCommandMessage,
  toEventMessage,
  toReplyMessage,
  type CommandMessage,
  type ReplyMessage,
} from '../../src/perp/sequencer/engine-gateway.ts';
import { startCommands, startedEngine } from '../support/journal-start.ts';

const T0 = 1_700_000_000_000;
const A = '0x' + '1'.repeat(40);
const B = '0x' + '2'.repeat(40);

function commands(): EngineCommand[] {
  let n = 0;
  const id = () => `cmd-${++n}`;
  const ts = () => T0 + n * 1_000;
  return [
    { kind: 'deposit', id: id(), ts: ts(), account: A, amount: 1_000_000n * 1_000_000n },
    { kind: 'deposit', id: id(), ts: ts(), account: B, amount: 123_456_789_012_345_678n },
    { kind: 'setMarkPrice', id: id(), ts: ts(), symbol: 'BTC-USD', markPriceTicks: 600_000, indexPriceTicks: 600_010 },
    // A rests, B crosses part of it (fills, fees, positions), then A's rest is amended and cancelled.
    { kind: 'placeOrder', id: id(), ts: ts(), account: A, symbol: 'BTC-USD', side: 'SELL', type: 'LIMIT', priceTicks: 600_000, sizeLots: 30, clientOrderId: 'a-1', expiresAtMs: T0 + 86_400_000 },
    { kind: 'placeOrder', id: id(), ts: ts(), account: B, symbol: 'BTC-USD', side: 'BUY', type: 'LIMIT', priceTicks: 600_100, sizeLots: 12, timeInForce: 'IOC' },
    { kind: 'placeOrder', id: id(), ts: ts(), account: B, symbol: 'BTC-USD', side: 'BUY', type: 'MARKET', sizeLots: 10 },
    { kind: 'placeOrder', id: id(), ts: ts(), account: A, symbol: 'BTC-USD', side: 'BUY', type: 'STOP_MARKET', sizeLots: 0, triggerPriceTicks: 650_000, triggerBy: 'MARK', closePosition: true, reduceOnly: true },
    { kind: 'amendOrder', id: id(), ts: ts(), account: A, orderId: 1, priceTicks: 600_200, sizeLots: 20 } as unknown as EngineCommand,
    { kind: 'cancelAll', id: id(), ts: ts(), account: A },
    // Refused: no such order, a size far too large, a withdrawal beyond the free collateral.
    { kind: 'cancelOrder', id: id(), ts: ts(), account: B, orderId: 999_999 } as unknown as EngineCommand,
    { kind: 'placeOrder', id: id(), ts: ts(), account: B, symbol: 'BTC-USD', side: 'BUY', type: 'LIMIT', priceTicks: 1, sizeLots: 10 ** 12 },
    { kind: 'withdraw', id: id(), ts: ts(), account: A, amount: 10n ** 30n } as unknown as EngineCommand,
    { kind: 'setMarkPrice', id: id(), ts: ts(), symbol: 'BTC-USD', markPriceTicks: 651_000, indexPriceTicks: 650_990 },
  ];
}

describe('engine messages written straight to text', () => {
  it('are the texts of the message objects for every command, answer and event of a real engine', () => {
    const { engine, events: listed } = startedEngine(T0);
    // The start's commands (rules, instruments with their nested configs) and their events too.
    for (const cmd of startCommands(T0)) expect(commandMessageText(cmd, 'replies')).toBe(JSON.stringify(toCommandMessage(cmd, 'replies')));
    for (const e of listed) expect(eventMessageText(e)).toBe(JSON.stringify(toEventMessage(e)));
    const claim = { account: A, nonce: '18446744073709551615', orderHash: `0x${'cd'.repeat(32)}`, expiry: T0 + 86_400_000, usedAt: T0 };
    let journalSeq = 100;
    const eventTypes = new Set<string>();
    let fills = 0;
    const codes = new Set<string>();
    for (const cmd of commands()) {
      for (const c of [undefined, claim]) {
        expect(commandMessageText(cmd, 'replies', c)).toBe(JSON.stringify(toCommandMessage(cmd, 'replies', c)));
        expect(commandMessageText(cmd, undefined, c)).toBe(JSON.stringify(toCommandMessage(cmd, undefined, c)));
      }
      const text = commandMessageText(cmd, 'replies', claim);
      expect(JSON.parse(text)).toMatchObject({ v: NONCE_CLAIM_PROTOCOL, id: cmd.id, claim });
      expect(fromCommandMessage(JSON.parse(text) as CommandMessage)).toEqual(cmd);

      const result = engine.apply(fromCommandMessage(JSON.parse(text) as CommandMessage));
      codes.add(result.code);
      fills += 'fills' in result && Array.isArray(result.fills) ? result.fills.length : 0;
      for (const outcome of [
        { result: { ...result, journalSeq: ++journalSeq } },
        { result: { ...result, journalSeq: null, resubmitted: true as const } },
      ]) {
        for (const speaks of [1, NONCE_CLAIM_PROTOCOL]) {
          const reply = replyMessageText(cmd.id, outcome, speaks);
          expect(reply).toBe(JSON.stringify(toReplyMessage(cmd.id, outcome, speaks)));
          expect(fromReplyMessage(JSON.parse(reply) as ReplyMessage)).toEqual(fromReplyMessage(toReplyMessage(cmd.id, outcome, speaks)));
        }
      }
      for (const e of result.events) {
        expect(eventMessageText(e)).toBe(JSON.stringify(toEventMessage(e)));
        eventTypes.add(e.type);
      }
    }
    // The stream covered what it claims to: fills, refusals of several kinds, events of many kinds.
    expect(codes.has('OK')).toBe(true);
    expect([...codes].filter((c) => c !== 'OK').length).toBeGreaterThanOrEqual(2);
    expect(fills).toBeGreaterThanOrEqual(2);
    expect(eventTypes.size).toBeGreaterThanOrEqual(6);
  });

  it('writes errors as before: an AppError with its code, anything else as INTERNAL without its message', () => {
    for (const error of [new AppError('STORAGE_UNAVAILABLE', 'journal down', { retryable: true }), new Error('secret detail')]) {
      for (const speaks of [1, NONCE_CLAIM_PROTOCOL]) {
        expect(replyMessageText('c-9', { error }, speaks)).toBe(JSON.stringify(toReplyMessage('c-9', { error }, speaks)));
      }
    }
    expect(replyMessageText('c-9', { error: new Error('secret detail') })).not.toContain('secret');
  });
});
