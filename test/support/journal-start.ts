/**
 * What the perp sequencer journals on its first start, before any submitted command: the engine's
 * rules (a setRules row, no event), then one addInstrument per default instrument (one event each),
 * with command ids from their journal seq and ts from the sequencer's clock.
 */
import { expect } from 'vitest';
import { ENGINE_RULES, type EngineCommand, type EngineEvent } from '../../src/perp/engine/engine-types.ts';
import { DEFAULT_INSTRUMENTS } from '../../src/perp/engine/instruments.ts';
import type { PerpEngine } from '../../src/perp/engine/perp-engine.ts';
import type { JournalRow } from '../../src/perp/store/engine-journal-store.ts';
import { genesisEngine } from '../../src/perp/sequencer/journal-replay.ts';

/** Journal rows of a first start: submitted commands start at journal seq START_ROWS + 1. */
export const START_ROWS = 1 + DEFAULT_INSTRUMENTS.length;

/** The first start's commands, in order, as a sequencer whose clock reads `ts` journals them. */
export function startCommands(ts: number): EngineCommand[] {
  return [
    { kind: 'setRules', id: `rules:${ENGINE_RULES}:1`, ts, rules: ENGINE_RULES },
    ...DEFAULT_INSTRUMENTS.map((config, i): EngineCommand => ({ kind: 'addInstrument', id: `instrument:add:${config.symbol}:${i + 2}`, ts, config })),
  ];
}

/** An engine as the sequencer starts it on an empty journal (genesis, then the start commands), and their events. */
export function startedEngine(ts: number): { engine: PerpEngine; events: EngineEvent[] } {
  const engine = genesisEngine();
  const events = startCommands(ts).flatMap((c) => {
    const r = engine.apply(c);
    expect(r.code).toBe('OK');
    return r.events;
  });
  return { engine, events };
}

/** The journal's first START_ROWS rows are exactly the first start's commands (any clock). */
export function expectStartRows(rows: readonly JournalRow[]): void {
  expect(rows.slice(0, START_ROWS).map((r) => [r.seq, r.kind, r.code, JSON.parse(r.command).config?.symbol ?? JSON.parse(r.command).rules])).toEqual([
    [1, 'setRules', 'OK', ENGINE_RULES],
    ...DEFAULT_INSTRUMENTS.map((c, i) => [i + 2, 'addInstrument', 'OK', c.symbol]),
  ]);
}
