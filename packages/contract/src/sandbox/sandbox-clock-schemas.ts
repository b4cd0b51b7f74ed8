/**
 * The sandbox's clock control (docs/sandbox.md "Clock"): move the whole venue's time forward, or
 * stop it between advances. What an advance runs, and in what order, is the server's
 * (src/sandbox/sandbox-clock.ts); what crosses the wire is here.
 */
import { Millis, Type, type Static } from '../common/schema-kit.ts';

/** The longest advance in one call: 31 days, a month with funding paid every interval of it. */
export const SANDBOX_MAX_ADVANCE_S = 31 * 86_400;

/** `GET /clock`, and the answer of a freeze. */
export const SandboxClockStateSchema = Type.Object({
  now: Millis({ description: 'the venue\'s time, ms' }),
  frozen: Type.Boolean({ description: 'whether the venue\'s time stands still between advances' }),
  advancedMs: Type.Integer({ minimum: 0, description: 'how far every advance so far has moved the venue (and its chain) ahead of the wall clock, ms' }),
});
export type SandboxClockState = Static<typeof SandboxClockStateSchema>;

export const SandboxClockAdvanceRequestSchema = Type.Object(
  { seconds: Type.Integer({ minimum: 1, maximum: SANDBOX_MAX_ADVANCE_S, description: 'how far to move the venue\'s time forward' }) },
  { additionalProperties: false },
);
export type SandboxClockAdvanceRequest = Static<typeof SandboxClockAdvanceRequestSchema>;

export const SandboxClockFreezeRequestSchema = Type.Object({ frozen: Type.Boolean() }, { additionalProperties: false });
export type SandboxClockFreezeRequest = Static<typeof SandboxClockFreezeRequestSchema>;

/** One task's runs in an advance. */
export const SandboxClockRunSchema = Type.Object({
  stage: Type.String({ description: 'prices, marks and expiries, funding, corporate actions or stock orders: the order they run in at each step' }),
  name: Type.String({ description: 'the task (and its chain)' }),
  runs: Type.Integer({ minimum: 0 }),
  failed: Type.Integer({ minimum: 0, description: 'runs that failed (the advance goes on; the log has each)' }),
  ms: Type.Integer({ minimum: 0, description: 'the time its runs took, ms' }),
});

export const SandboxClockAdvanceSchema = Type.Object({
  from: Millis({ description: 'the venue\'s time before the advance' }),
  to: Millis({ description: 'the venue\'s time the advance moved it to' }),
  now: Millis({ description: 'the venue\'s time at the answer (to, plus the time the advance took unless frozen)' }),
  frozen: Type.Boolean(),
  steps: Type.Integer({ minimum: 1, description: 'the instants every task ran at: each step boundary crossed, and `to`' }),
  stepMs: Type.Integer({ minimum: 1, description: 'the step: the shortest funding interval' }),
  chainTime: Type.Integer({ description: 'the chain\'s latest block time after the advance, s' }),
  chainMs: Type.Integer({ minimum: 0, description: 'the time moving the chain took at the steps, ms' }),
  ran: Type.Array(SandboxClockRunSchema),
});
export type SandboxClockAdvance = Static<typeof SandboxClockAdvanceSchema>;
