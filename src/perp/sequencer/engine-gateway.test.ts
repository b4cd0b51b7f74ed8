import { describe, expect, test } from 'vitest';
import { AppError } from '../../errors/app-error.ts';
import { APP_VERSION } from '../../config/build-info.ts';
import {
  ENGINE_PROTOCOL,
  NONCE_CLAIM_PROTOCOL,
  fromCommandMessage,
  fromEventMessage,
  fromReplyMessage,
  toCommandMessage,
  toEventMessage,
  toReplyMessage,
  type CommandMessage,
} from './engine-gateway.ts';

describe('engine messages carry their protocol version', () => {
  const cmd = { kind: 'cancelAll', id: 'c-1', account: '0x0000000000000000000000000000000000000001' } as const;

  test('a message says the lowest version that reads it, and reads back: 1, or 2 with a nonce claim', () => {
    const msg = toCommandMessage(cmd as never, 'replies');
    expect(msg.v).toBe(1);
    expect(msg).not.toHaveProperty('claim');
    expect(fromCommandMessage(JSON.parse(JSON.stringify(msg)) as CommandMessage)).toEqual(cmd);
    const claim = { account: '0x0000000000000000000000000000000000000001', nonce: '7', orderHash: `0x${'ab'.repeat(32)}`, expiry: 1_800_000_000_000, usedAt: 1_700_000_000_000 };
    const claimed = JSON.parse(JSON.stringify(toCommandMessage(cmd as never, 'replies', claim))) as CommandMessage;
    expect(claimed).toMatchObject({ v: NONCE_CLAIM_PROTOCOL, claim });
    expect(NONCE_CLAIM_PROTOCOL).toBe(2);
    expect(fromCommandMessage(claimed)).toEqual(cmd);
  });

  test('a reply says the highest protocol its engine takes (1 unless told), in a form a protocol-1 API still reads', () => {
    expect(toReplyMessage('c-1', { error: new AppError('CONFLICT', 'x') })).toMatchObject({ v: 1, speaks: 1 });
    expect(toReplyMessage('c-1', { error: new AppError('CONFLICT', 'x') }, NONCE_CLAIM_PROTOCOL)).toMatchObject({ v: 1, speaks: 2 });
    expect(ENGINE_PROTOCOL).toBe(NONCE_CLAIM_PROTOCOL);
    expect(toEventMessage({ type: 'fundingApplied', seq: 3, ts: 1 } as never).v).toBe(1);
  });

  test('a message without a version (a release before 0.2.0) is version 1 and is read', () => {
    const { v: _v, ...old } = toCommandMessage(cmd as never);
    expect(fromCommandMessage(old as CommandMessage)).toEqual(cmd);
  });

  test('a newer protocol is refused, naming both, rather than misread', () => {
    const newer = { ...toCommandMessage(cmd as never), v: ENGINE_PROTOCOL + 1 };
    let err: unknown;
    try {
      fromCommandMessage(newer);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('CONFLICT');
    expect((err as AppError).retryable).toBe(false);
    expect((err as AppError).message).toBe(`perp engine: a command of protocol ${ENGINE_PROTOCOL + 1} (a newer release) reached a process that speaks protocol ${ENGINE_PROTOCOL} (tokex ${APP_VERSION}); upgrade this process`);
    expect(() => fromReplyMessage({ type: 'reply', v: ENGINE_PROTOCOL + 1, id: 'c-1', result: {} })).toThrow(`a reply of protocol ${ENGINE_PROTOCOL + 1}`);
    expect(() => fromEventMessage({ type: 'event', v: ENGINE_PROTOCOL + 1, seq: 1, event: {} })).toThrow(`an event of protocol`);
  });
});
