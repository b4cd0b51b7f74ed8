import { describe, expect, test } from 'vitest';
import { AppError } from '../../errors/app-error.ts';
import { APP_VERSION } from '../../config/build-info.ts';
import { ENGINE_PROTOCOL, fromCommandMessage, fromEventMessage, fromReplyMessage, toCommandMessage, type CommandMessage } from './engine-gateway.ts';

describe('engine messages carry their protocol version', () => {
  const cmd = { kind: 'cancelAll', id: 'c-1', account: '0x0000000000000000000000000000000000000001' } as const;

  test('a message this release writes says its version and reads back', () => {
    const msg = toCommandMessage(cmd as never, 'replies');
    expect(msg.v).toBe(ENGINE_PROTOCOL);
    expect(fromCommandMessage(JSON.parse(JSON.stringify(msg)) as CommandMessage)).toEqual(cmd);
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
