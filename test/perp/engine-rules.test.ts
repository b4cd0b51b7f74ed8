/**
 * The engine's rules version (ENGINE_RULES, `setRules`): a journal starts under rules 1 and its
 * setRules row raises them, so a journal written by an earlier release replays under the rules it
 * was applied under. The command only raises them, emits nothing, and a rejected one changes
 * nothing; a snapshot carries the rules past 1 (and hashes as before under 1).
 */
import { describe, expect, it } from 'vitest';
import { ENGINE_RULES, type CommandResult, type EngineSnapshot } from '../../src/perp/engine/engine-types.ts';
import { PerpEngine } from '../../src/perp/engine/perp-engine.ts';
import { genesisEngine } from '../../src/perp/sequencer/journal-replay.ts';

/** The refusal's message (an accepted command has none). */
const refusal = (r: CommandResult): string | undefined => ('message' in r ? r.message : undefined);
const setRules = (rules: unknown, id = `rules-${String(rules)}`) => ({ kind: 'setRules' as const, id, ts: 1, rules: rules as number });

describe('engine rules', () => {
  it('a journal starts under rules 1 and an engine made directly under this release\'s', () => {
    expect(ENGINE_RULES).toBe(3);
    expect(genesisEngine().rules).toBe(1);
    expect(new PerpEngine().rules).toBe(ENGINE_RULES);
    expect(() => new PerpEngine({ rules: ENGINE_RULES + 1 })).toThrow(`engine: rules must be 1..${ENGINE_RULES}`);
    expect(() => new PerpEngine({ rules: 0 })).toThrow(`engine: rules must be 1..${ENGINE_RULES}`);
  });

  it('setRules raises the rules, with no event; a lower, equal, unknown or malformed value is refused and changes nothing', () => {
    const e = genesisEngine();
    const before = e.stateHash();
    for (const bad of [0, 1, ENGINE_RULES + 1, 1.5, '2', null]) {
      const r = e.apply(setRules(bad));
      expect(r.ok, String(bad)).toBe(false);
      expect(r.code).toBe('INVALID');
      expect(e.stateHash()).toBe(before);
      expect(e.rules).toBe(1);
    }
    expect(refusal(e.apply(setRules(1, 'same')))).toBe('rules: already 1; rules only rise');
    expect(refusal(e.apply(setRules(ENGINE_RULES + 1, 'newer')))).toBe(`rules: 1..${ENGINE_RULES} (this engine's)`);
    const lastSeq = e.lastSeq;
    const r = e.apply(setRules(2));
    expect(r).toEqual({ ok: true, code: 'OK', events: [] });
    expect(e.rules).toBe(2);
    expect(e.lastSeq).toBe(lastSeq);
    expect(e.stateHash()).not.toBe(before);
    expect(refusal(e.apply(setRules(2, 'again')))).toBe('rules: already 2; rules only rise');
  });

  it('a snapshot under rules 1 has no rules field (it hashes as before versions); past 1 it carries them and restores to the same hash', () => {
    const one = genesisEngine();
    expect('rules' in one.snapshot()).toBe(false);
    const restoredOne = PerpEngine.fromSnapshot(one.snapshot());
    expect(restoredOne.rules).toBe(1);
    expect(restoredOne.stateHash()).toBe(one.stateHash());

    const two = genesisEngine();
    two.apply(setRules(2));
    expect(two.snapshot().rules).toBe(2);
    const restoredTwo = PerpEngine.fromSnapshot(structuredClone(two.snapshot()));
    expect(restoredTwo.rules).toBe(2);
    expect(restoredTwo.stateHash()).toBe(two.stateHash());
  });

  it('a snapshot under rules this engine does not know (a newer release\'s), or naming rules 1, is refused', () => {
    const snap = genesisEngine().snapshot();
    for (const rules of [ENGINE_RULES + 1, 1, 0, 2.5]) {
      expect(() => PerpEngine.fromSnapshot({ ...snap, rules } as EngineSnapshot), String(rules)).toThrow(`engine snapshot: rules ${rules}, where this engine knows 1..${ENGINE_RULES}`);
    }
  });
});
