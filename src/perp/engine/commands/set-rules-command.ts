/**
 * setRules: the engine applies the rules of `rules` (ENGINE_RULES) from this command on. A rule
 * change that would make an old journal replay differently takes effect at this row instead, so a
 * journal written under earlier rules still replays to its own results (the sequencer journals the
 * command at start when the engine is behind). Emits no event: nothing a client sees changes here.
 */
import { ENGINE_RULES, type Accepted, type Rejected, type SetRulesCommand } from '../engine-types.ts';
import { reject, type EngineState } from '../state/engine-state.ts';
import { checkBase, isSafePosInt } from '../state/validate.ts';

export function setRulesCommand(s: EngineState, cmd: SetRulesCommand): Accepted | Rejected {
  const bad = checkBase(cmd);
  if (bad) return bad;
  const rules = cmd.rules;
  if (!isSafePosInt(rules) || rules > ENGINE_RULES) return reject('INVALID', `rules: 1..${ENGINE_RULES} (this engine's)`);
  if (rules <= s.rules) return reject('INVALID', `rules: already ${s.rules}; rules only rise`);
  s.begin(cmd);
  s.rules = rules;
  return { ok: true, code: 'OK', events: s.end() };
}
