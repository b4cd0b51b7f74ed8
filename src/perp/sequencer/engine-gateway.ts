/**
 * How the API reaches the engine: commands with ids in, replies with the same ids and events with
 * sequence numbers out. In the embedded stack it is a function call into the sequencer; the message
 * types below are plain JSON so that a broker (Redis Streams, NATS JetStream) can carry them when
 * the API and the engine run as separate processes (docs/perp-sequencer.md, "Messages").
 */
import { APP_VERSION } from '../../config/build-info.ts';
import { AppError } from '../../errors/app-error.ts';
import type { EngineCommand, EngineEvent } from '../engine/engine-types.ts';
import {
  commandFromJson,
  commandToJson,
  eventFromJson,
  eventToJson,
  resultFromJson,
  resultToJson,
  type Json,
} from './engine-codec.ts';
import type { EngineSequencer, EventListener, SequencedResult } from './engine-sequencer.ts';
import type { JournalNonceClaim as NonceClaimInput } from '../store/engine-journal-store.ts';

export interface EngineGateway {
  /**
   * Answers once the command is durable in the journal (see EngineSequencer.submit). `claim`: the
   * signed order's nonce, claimed by the engine before it applies the command (only where
   * `claimsNonces()` says so): a nonce another order used is answered `NONCE_USED`, nothing applied.
   */
  submit(cmd: EngineCommand, claim?: NonceClaimInput): Promise<SequencedResult>;
  /**
   * The commands applied back to back and journalled in one commit (EngineSequencer.submitMany).
   * A gateway without it (a broker) sends them one by one, in order. `claims[i]` is `cmds[i]`'s.
   */
  submitMany?(cmds: readonly EngineCommand[], claims?: ReadonlyArray<NonceClaimInput | undefined>): Promise<SequencedResult[]>;
  /**
   * True when the engine behind this gateway claims order nonces carried with their commands
   * (protocol 2): the API then makes no nonce write of its own. Absent or false: the API claims them.
   */
  claimsNonces?(): boolean;
  /**
   * Every durable event with seq ≥ fromSeq, in order without gaps, then live; call the result to
   * stop. `onError` hears a catch-up that failed (the subscription has then ended).
   */
  subscribe(fromSeq: number, listener: EventListener, onError?: (err: unknown) => void): () => void;
}

/** API → engine. `id` is the command's id: a broker redelivery is answered from the journal. */
/**
 * The version of the messages between perp APIs and the engine (docs/upgrades.md, "Scale-out"). A
 * release that changes what a command, reply or event carries in a way the previous one cannot read
 * raises it; a process refuses a message of a higher version rather than misread it, so a new perp
 * API never has an old engine execute half a command (or the reverse) during a rolling upgrade. A
 * message without `v` is version 1 (releases before 0.2.0).
 */
export const ENGINE_PROTOCOL = 2;

/**
 * Protocol 2: a command may carry its order's nonce claim (`claim`), which the engine makes before
 * applying it. A message says the lowest protocol that reads it: a command with a claim is 2 (an
 * engine of protocol 1 refuses it rather than apply the order without its replay check), every
 * other message stays 1, so that processes of both releases keep talking during a rolling upgrade.
 * A reply says the highest protocol its engine takes (`speaks`: 2 only where it has a claimer): an
 * API sends claims only to an engine that takes them.
 */
export const NONCE_CLAIM_PROTOCOL = 2;

/** Refuses a message written by a newer protocol than this process speaks. */
function assertReadable(kind: string, v: number | undefined): void {
  const version = v ?? 1;
  if (version > ENGINE_PROTOCOL) {
    throw new AppError('CONFLICT', `perp engine: ${kind === 'event' ? 'an' : 'a'} ${kind} of protocol ${version} (a newer release) reached a process that speaks protocol ${ENGINE_PROTOCOL} (tokex ${APP_VERSION}); upgrade this process`, { retryable: false });
  }
}

export interface CommandMessage {
  type: 'command';
  /** Protocol version (ENGINE_PROTOCOL); absent = 1. */
  v?: number;
  id: string;
  /** The command, bigints as decimal strings. */
  command: Json;
  /** Where the reply goes (a stream or subject name), for a broker. */
  replyTo?: string;
  /** Protocol 2: the order's nonce, for the engine to claim before applying the command. */
  claim?: NonceClaimInput;
}

/** Engine → API, one per command message. */
export interface ReplyMessage {
  type: 'reply';
  /** Protocol version (ENGINE_PROTOCOL); absent = 1. */
  v?: number;
  id: string;
  /** The result (events included), bigints as decimal strings; absent when `error` is set. */
  result?: Json;
  journalSeq?: number | null;
  resubmitted?: boolean;
  /** The outcome is not known durable: resubmit with the same id. */
  error?: { code: string; message: string; retryable: boolean };
  /** The highest protocol of command the answering engine takes (toReplyMessage); absent = 1. */
  speaks?: number;
}

/** Engine → subscribers, in seq order without gaps. */
export interface EventMessage {
  type: 'event';
  /** Protocol version (ENGINE_PROTOCOL); absent = 1. */
  v?: number;
  seq: number;
  event: Json;
}

export type EngineMessage = CommandMessage | ReplyMessage | EventMessage;

export function toCommandMessage(cmd: EngineCommand, replyTo?: string, claim?: NonceClaimInput): CommandMessage {
  return {
    type: 'command',
    v: claim ? NONCE_CLAIM_PROTOCOL : 1,
    id: cmd.id,
    command: commandToJson(cmd),
    ...(replyTo !== undefined ? { replyTo } : {}),
    ...(claim ? { claim } : {}),
  };
}

// A message's JSON text straight from the engine's objects, bigints as decimal strings: the same
// text as JSON.stringify of the message the to…Message functions build, without their deep copy of
// the command, result or event first (toJsonSafe: an object and an array for each level). Over
// Redis the engine writes one reply per command and the API one command per order; a reply with
// fills takes 0.61–0.74 of the time this way (docs/performance.md, issue 40, scale-out).
const bigintAsString = (_key: string, v: unknown): unknown => (typeof v === 'bigint' ? v.toString() : v);

/** `JSON.stringify(toCommandMessage(cmd, replyTo, claim))`, without the copy. */
export function commandMessageText(cmd: EngineCommand, replyTo?: string, claim?: NonceClaimInput): string {
  const msg = {
    type: 'command',
    v: claim ? NONCE_CLAIM_PROTOCOL : 1,
    id: cmd.id,
    command: cmd,
    ...(replyTo !== undefined ? { replyTo } : {}),
    ...(claim ? { claim } : {}),
  };
  return JSON.stringify(msg, bigintAsString);
}

/** `JSON.stringify(toReplyMessage(id, outcome, speaks))`, without the copy. */
export function replyMessageText(id: string, outcome: { result: SequencedResult } | { error: unknown }, speaks = 1): string {
  if (!('result' in outcome)) return JSON.stringify(toReplyMessage(id, outcome, speaks));
  const { journalSeq, resubmitted, ...result } = outcome.result;
  return JSON.stringify({ type: 'reply', v: 1, speaks, id, result, journalSeq, ...(resubmitted ? { resubmitted: true } : {}) }, bigintAsString);
}

/** `JSON.stringify(toEventMessage(event))`, without the copy. */
export function eventMessageText(event: EngineEvent): string {
  return JSON.stringify({ type: 'event', v: 1, seq: event.seq, event }, bigintAsString);
}

export function fromCommandMessage(msg: CommandMessage): EngineCommand {
  assertReadable('command', msg.v);
  const cmd = commandFromJson(msg.command);
  if (cmd !== null && typeof cmd === 'object' && cmd.id !== msg.id) return { ...cmd, id: msg.id };
  return cmd;
}

/**
 * `speaks`: the highest protocol of command the answering engine takes: NONCE_CLAIM_PROTOCOL where
 * it claims nonces, 1 (the default) where it would refuse a claim.
 */
export function toReplyMessage(id: string, outcome: { result: SequencedResult } | { error: unknown }, speaks = 1): ReplyMessage {
  if ('result' in outcome) {
    const { journalSeq, resubmitted, ...result } = outcome.result;
    return { type: 'reply', v: 1, speaks, id, result: resultToJson(result), journalSeq, ...(resubmitted ? { resubmitted: true } : {}) };
  }
  const e = outcome.error;
  const error =
    e instanceof AppError
      ? { code: e.code, message: e.message, retryable: e.retryable }
      : { code: 'INTERNAL', message: 'perp engine: internal error', retryable: false };
  return { type: 'reply', v: 1, speaks, id, error };
}

/** The reply as the API uses it: the result, or the error thrown as an AppError. */
export function fromReplyMessage(msg: ReplyMessage): SequencedResult {
  assertReadable('reply', msg.v);
  if (msg.error !== undefined || msg.result === undefined) {
    const e = msg.error ?? { code: 'INTERNAL', message: 'perp engine: empty reply', retryable: false };
    throw new AppError(e.code as AppError['code'], e.message, { retryable: e.retryable });
  }
  return {
    ...resultFromJson(msg.result),
    journalSeq: msg.journalSeq ?? null,
    ...(msg.resubmitted ? { resubmitted: true as const } : {}),
  };
}

export function toEventMessage(event: EngineEvent): EventMessage {
  return { type: 'event', v: 1, seq: event.seq, event: eventToJson(event) };
}

export function fromEventMessage(msg: EventMessage): EngineEvent {
  assertReadable('event', msg.v);
  return eventFromJson(msg.event);
}

export interface InProcessGatewayOptions {
  /**
   * Pass every command, reply and event through its message form and JSON text, as a broker
   * would: proves the messages carry everything, at the cost of the encoding. Default false.
   */
  serialize?: boolean;
}

/** The embedded stack's gateway: direct calls into the sequencer of this process. */
export function createInProcessGateway(sequencer: EngineSequencer, opts: InProcessGatewayOptions = {}): EngineGateway {
  // No claims here (no `claimsNonces`): the engine in this process has the journal's ledger, or its
  // API claims. One sent all the same is refused, never dropped: the order would run unchecked.
  const unclaimed = (claims: ReadonlyArray<unknown> | undefined) => claims !== undefined && claims.some((c) => c !== undefined);
  const refuseClaims = () => Promise.reject(new AppError('CONFLICT', 'perp engine: the in-process gateway takes no nonce claims; nothing was applied', { retryable: false }));
  if (!opts.serialize) {
    return {
      submit: (cmd, claim) => (claim !== undefined ? refuseClaims() : sequencer.submit(cmd)),
      submitMany: (cmds, claims) => (unclaimed(claims) ? refuseClaims() : sequencer.submitMany(cmds)),
      subscribe: (fromSeq, listener, onError) => sequencer.subscribe(fromSeq, listener, onError),
    };
  }
  const wire = <T>(m: T): T => JSON.parse(JSON.stringify(m)) as T;
  const reply = (id: string, outcome: { result: SequencedResult } | { error: unknown }) => fromReplyMessage(wire(toReplyMessage(id, outcome)));
  return {
    async submitMany(cmds, claims) {
      if (unclaimed(claims)) return refuseClaims();
      const msgs = cmds.map((cmd) => wire(toCommandMessage(cmd)));
      let results: SequencedResult[];
      try {
        results = await sequencer.submitMany(msgs.map(fromCommandMessage));
      } catch (error) {
        // The group shares one journal commit: a failure is every command's (the reply throws it).
        return [reply(msgs[0].id, { error })];
      }
      return results.map((r, i) => reply(msgs[i].id, { result: r }));
    },
    async submit(cmd, claim) {
      if (claim !== undefined) return refuseClaims();
      const msg = wire(toCommandMessage(cmd));
      let reply: ReplyMessage;
      try {
        reply = toReplyMessage(msg.id, { result: await sequencer.submit(fromCommandMessage(msg)) });
      } catch (error) {
        reply = toReplyMessage(msg.id, { error });
      }
      return fromReplyMessage(wire(reply));
    },
    subscribe(fromSeq, listener, onError) {
      return sequencer.subscribe(fromSeq, (e) => listener(fromEventMessage(wire(toEventMessage(e)))), onError);
    },
  };
}
