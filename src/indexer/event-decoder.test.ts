import fc from 'fast-check';
import { decodeEventLog, encodeAbiParameters, encodeEventTopics, type AbiEvent, type AbiParameter, type Hex } from 'viem';
import { describe, expect, test } from 'vitest';
import { decodeEvent, KNOWN_EVENTS } from './event-decoder.ts';

/** viem's decoded value in the fast decoder's representation (see event-decoder.ts). */
function normalise(type: string, value: unknown): unknown {
  if (typeof value === 'bigint') {
    const bits = Number(/^u?int(\d*)$/.exec(type)?.[1] || 256);
    return bits <= 48 ? Number(value) : value.toString();
  }
  if (type === 'address') return (value as string).toLowerCase();
  if (/^bytes\d+$/.test(type)) return (value as string).toLowerCase();
  return value;
}

function arbitraryFor(type: string): fc.Arbitrary<unknown> {
  let m = /^uint(\d*)$/.exec(type);
  if (m) {
    const bits = BigInt(m[1] || 256);
    // Bias towards the edges, where a slicing decoder goes wrong.
    return fc.oneof(fc.constantFrom(0n, 1n, (1n << bits) - 1n, 1n << (bits - 1n)), fc.bigInt({ min: 0n, max: (1n << bits) - 1n }));
  }
  m = /^int(\d*)$/.exec(type);
  if (m) {
    const bits = BigInt(m[1] || 256);
    return fc.bigInt({ min: -(1n << (bits - 1n)), max: (1n << (bits - 1n)) - 1n });
  }
  if (type === 'address') return fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${Buffer.from(b).toString('hex')}`);
  if (type === 'bool') return fc.boolean();
  m = /^bytes(\d+)$/.exec(type);
  if (m) {
    const n = Number(m[1]);
    return fc.uint8Array({ minLength: n, maxLength: n }).map((b) => `0x${Buffer.from(b).toString('hex')}`);
  }
  throw new Error(`no arbitrary for ${type}`);
}

/** A log of `event` with `values` (in input order), encoded by viem. */
function encodeLog(event: AbiEvent, values: unknown[]): { topics: Hex[]; data: Hex } {
  const args: Record<string, unknown> = {};
  event.inputs.forEach((input, i) => {
    if (input.indexed) args[input.name as string] = values[i];
  });
  const topics = encodeEventTopics({ abi: [event], eventName: event.name, args } as never) as Hex[];
  const dataInputs = event.inputs.filter((i) => !i.indexed) as AbiParameter[];
  const dataValues = event.inputs.map((_, i) => values[i]).filter((_, i) => !event.inputs[i].indexed);
  const data = encodeAbiParameters(dataInputs, dataValues as never);
  return { topics, data };
}

describe('fast event decoder', () => {
  test('knows every event of the router, cashier, stock and one-click router', () => {
    const names = new Set([...KNOWN_EVENTS.values()].map((e) => e.name));
    for (const name of [
      'OrderPlaced',
      'OrderCancelRequested',
      'OrderFilled',
      'OrderClosed',
      'Deposited',
      'DepositQueued',
      'DepositSettled',
      'Withdrawn',
      'WithdrawalQueued',
      'WithdrawalSettled',
      'StockDeposited',
      'StockWithdrawn',
      'Transfer',
      'Delegated',
      'Executed',
    ]) {
      expect(names.has(name), name).toBe(true);
    }
  });

  for (const [selector, event] of KNOWN_EVENTS) {
    test(`${event.name}: equals viem's decodeEventLog on random values`, () => {
      fc.assert(
        fc.property(fc.tuple(...event.inputs.map((i) => arbitraryFor(i.type))), (values) => {
          const { topics, data } = encodeLog(event, values);
          expect(topics[0]).toBe(selector);
          const viem = decodeEventLog({ abi: [event], topics: topics as [Hex, ...Hex[]], data });
          const expected: Record<string, unknown> = {};
          for (const input of event.inputs) {
            expected[input.name as string] = normalise(input.type, (viem.args as Record<string, unknown>)[input.name as string]);
          }
          const fast = decodeEvent(topics, data);
          expect(fast?.name).toBe(viem.eventName);
          expect(fast?.args).toEqual(expected);
          // JSON keeps every value exactly (the chain_events.args column).
          expect(JSON.parse(JSON.stringify(fast?.args))).toEqual(expected);
        }),
        { numRuns: 60 },
      );
    });
  }

  test('unknown selectors and malformed logs give undefined instead of throwing', () => {
    expect(decodeEvent([], '0x')).toBeUndefined();
    expect(decodeEvent([`0x${'ab'.repeat(32)}`], '0x')).toBeUndefined();
    const placed = [...KNOWN_EVENTS].find(([, e]) => e.name === 'OrderPlaced') as [string, AbiEvent];
    expect(decodeEvent([placed[0]], '0x')).toBeUndefined();
  });
});
