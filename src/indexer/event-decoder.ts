/**
 * Fast decoding of an indexer's events straight from `topics` / `data` (`createEventDecoder(abis)`;
 * `decodeEvent` for the stock contracts).
 *
 * Every event of the StockRouter, Cashier, Stock and OneClickRouter (and of any contract an indexer
 * follows: the decoder refuses others) has only static parameters, so each argument is one 32-byte
 * word: an indexed one is a topic, the others are consecutive words of `data`. The layouts are
 * derived once per decoder from the ABIs, and decoding is string slicing —
 * several times faster than viem's generic `decodeEventLog` (see docs/indexer.md); a test proves
 * both give the same values for every event type.
 *
 * Value representation (what is stored as JSON in `chain_events.args`):
 * - uint/int of at most 48 bits: JS number (as viem does);
 * - wider integers: decimal string (exact; bigints do not survive JSON);
 * - address: lower-case 0x hex; bool: boolean; bytesN: lower-case 0x hex.
 */
import { toEventSelector, type Abi, type AbiEvent } from 'viem';
import { cashierAbi, oneClickRouterAbi, stockAbi, stockRouterAbi } from '../chain/abi/generated/index.ts';

export type EventArgValue = string | number | boolean;
export type EventArgs = Record<string, EventArgValue>;

export interface DecodedEvent {
  name: string;
  args: EventArgs;
}

/** A log as eth_getLogs returns it (hex quantities). `blockTimestamp` is not sent by every node. */
export interface RawLog {
  address: string;
  topics: string[];
  data: string;
  blockHash: string;
  blockNumber: string;
  blockTimestamp?: string;
  transactionHash: string;
  transactionIndex?: string;
  logIndex: string;
  removed?: boolean;
}

type Kind = 'uint-small' | 'uint' | 'int-small' | 'int' | 'address' | 'bool' | 'bytes';

interface Param {
  name: string;
  kind: Kind;
  /** bits for ints, bytes for bytesN */
  size: number;
  indexed: boolean;
}

interface Layout {
  name: string;
  params: Param[];
  topicCount: number;
  dataWords: number;
  event: AbiEvent;
}

function kindOf(type: string): { kind: Kind; size: number } | undefined {
  let m = /^uint(\d*)$/.exec(type);
  if (m) {
    const bits = m[1] ? Number(m[1]) : 256;
    return { kind: bits <= 48 ? 'uint-small' : 'uint', size: bits };
  }
  m = /^int(\d*)$/.exec(type);
  if (m) {
    const bits = m[1] ? Number(m[1]) : 256;
    return { kind: bits <= 48 ? 'int-small' : 'int', size: bits };
  }
  if (type === 'address') return { kind: 'address', size: 20 };
  if (type === 'bool') return { kind: 'bool', size: 1 };
  m = /^bytes(\d+)$/.exec(type);
  if (m) return { kind: 'bytes', size: Number(m[1]) };
  return undefined;
}

/** The stock domain's ABIs: the default decoder's (`decodeEvent`), and what the property tests cover. */
export const INDEXED_ABIS: readonly Abi[] = [stockRouterAbi, cashierAbi, stockAbi, oneClickRouterAbi];

/** Layouts by selector of every event of `abis` (the first ABI naming a selector wins). */
function layoutsOf(abis: readonly Abi[]): Map<string, Layout> {
  const layouts = new Map<string, Layout>();
  for (const abi of abis) {
    for (const item of abi) {
      if (item.type !== 'event' || item.anonymous) continue;
      const selector = toEventSelector(item);
      if (layouts.has(selector)) continue;
      const params: Param[] = [];
      let supported = true;
      for (const input of item.inputs) {
        const k = kindOf(input.type);
        if (!k || !input.name) {
          supported = false;
          break;
        }
        params.push({ name: input.name, kind: k.kind, size: k.size, indexed: input.indexed === true });
      }
      // A dynamic parameter would need the generic decoder; an indexer's contracts must not have one.
      if (!supported) throw new Error(`event-decoder: ${item.name} has a parameter the fast decoder does not support`);
      layouts.set(selector, {
        name: item.name,
        params,
        topicCount: 1 + params.filter((p) => p.indexed).length,
        dataWords: params.filter((p) => !p.indexed).length,
        event: item,
      });
    }
  }
  return layouts;
}

/** `s[start, start+64)` (one word, lower-case hex without 0x) as a decimal string. */
function uintText(s: string, start: number): string {
  const end = start + 64;
  let i = start;
  while (i < end && s.charCodeAt(i) === 48) i++;
  if (i === end) return '0';
  // 13 hex digits = 52 bits: exact in a double, and far cheaper than a BigInt round trip.
  if (end - i <= 13) return String(parseInt(s.slice(i, end), 16));
  return BigInt(`0x${s.slice(i, end)}`).toString();
}

function decodeWord(p: Param, s: string, start: number): EventArgValue {
  switch (p.kind) {
    case 'uint-small':
      return parseInt(s.slice(start + 52, start + 64), 16);
    case 'uint':
      return uintText(s, start);
    case 'address':
      return `0x${s.slice(start + 24, start + 64).toLowerCase()}`;
    case 'bool':
      return s.charCodeAt(start + 63) !== 48;
    case 'bytes':
      return `0x${s.slice(start, start + p.size * 2).toLowerCase()}`;
    case 'int-small':
      return Number(BigInt.asIntN(p.size, BigInt(`0x${s.slice(start, start + 64)}`)));
    case 'int':
      return BigInt.asIntN(p.size, BigInt(`0x${s.slice(start, start + 64)}`)).toString();
  }
}

export type EventDecoder = (topics: readonly string[], data: string) => DecodedEvent | undefined;

/**
 * A decoder of the events of `abis`: undefined when topic0 is unknown or the log does not have the
 * layout its selector promises (never throws: a foreign log must not stop an indexer). Throws at
 * once if an event of `abis` has a parameter of dynamic size.
 */
export function createEventDecoder(abis: readonly Abi[]): EventDecoder & { known: ReadonlyMap<string, AbiEvent> } {
  const layouts = layoutsOf(abis);
  const decode: EventDecoder = (topics, data) => {
    const topic0 = topics[0];
    if (topic0 === undefined) return undefined;
    const layout = layouts.get(topic0.toLowerCase());
    if (!layout) return undefined;
    if (topics.length !== layout.topicCount || data.length < 2 + layout.dataWords * 64) return undefined;
    const args: EventArgs = {};
    let topic = 1;
    let word = 2;
    for (const p of layout.params) {
      if (p.indexed) {
        args[p.name] = decodeWord(p, topics[topic++], 2);
      } else {
        args[p.name] = decodeWord(p, data, word);
        word += 64;
      }
    }
    return { name: layout.name, args };
  };
  return Object.assign(decode, { known: new Map([...layouts].map(([s, l]) => [s, l.event])) as ReadonlyMap<string, AbiEvent> });
}

const stockDecoder = createEventDecoder(INDEXED_ABIS);

/** Every event of the stock domain's contracts, by selector (topic0). */
export const KNOWN_EVENTS: ReadonlyMap<string, AbiEvent> = stockDecoder.known;

/** Decodes a log of one of the stock domain's contracts (see `createEventDecoder`). */
export const decodeEvent: EventDecoder = stockDecoder;
