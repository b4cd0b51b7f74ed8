/**
 * Listing and settings of instruments as journalled commands: the settings a venue traded under are
 * part of its history, so a replay after a configuration change reproduces the same balances. Tick
 * and lot size are fixed once listed (resting orders and positions are counted in them).
 */
import type { Accepted, AddInstrumentCommand, Rejected, UpdateInstrumentCommand } from '../engine-types.ts';
import { instrumentSpec, type InstrumentConfig, type InstrumentSpec } from '../instruments.ts';
import { imrFor } from '../risk/margin-rates.ts';
import { reject, type EngineState } from '../state/engine-state.ts';
import { checkBase } from '../state/validate.ts';

/** The configuration as the snapshot and the events carry it: every setting, no derived unit. */
export function configOf(spec: InstrumentSpec): InstrumentConfig {
  const { unitMicros: _unit, ...config } = spec;
  return config;
}

function specOf(config: unknown): InstrumentSpec | Rejected {
  if (config === null || typeof config !== 'object') return reject('INVALID', 'config: an instrument configuration');
  try {
    return instrumentSpec(config as InstrumentConfig);
  } catch (err) {
    return reject('INVALID', `config: ${(err as Error).message}`);
  }
}

export function addInstrumentCommand(s: EngineState, cmd: AddInstrumentCommand): Accepted | Rejected {
  const bad = checkBase(cmd);
  if (bad) return bad;
  const spec = specOf(cmd.config);
  if ('ok' in spec) return spec;
  if (s.instruments.has(spec.symbol)) return reject('INSTRUMENT_EXISTS', `symbol: ${spec.symbol} is already listed`);
  s.begin(cmd);
  s.addInstrument(spec);
  s.emit({ type: 'instrumentConfigured', symbol: spec.symbol, config: configOf(spec), added: true });
  return { ok: true, code: 'OK', events: s.end() };
}

export function updateInstrumentCommand(s: EngineState, cmd: UpdateInstrumentCommand): Accepted | Rejected {
  const bad = checkBase(cmd);
  if (bad) return bad;
  const spec = specOf(cmd.config);
  if ('ok' in spec) return spec;
  const inst = s.instruments.get(spec.symbol);
  if (inst === undefined) return reject('UNKNOWN_SYMBOL', `symbol: unknown ${JSON.stringify(spec.symbol)}`);
  if (spec.tickSize !== inst.spec.tickSize || spec.lotSize !== inst.spec.lotSize) {
    return reject('INSTRUMENT_IMMUTABLE', 'config: tickSize and lotSize of a listed instrument cannot change');
  }
  s.begin(cmd);
  inst.configure(spec, s.defaultLeverage);
  // Positions take the new initial-margin floor; resting orders keep the reserve they were admitted with.
  for (const pos of inst.positions) {
    if (pos.leverage > spec.maxLeverage) pos.leverage = spec.maxLeverage;
    pos.imrPpm = imrFor(spec, pos.leverage);
    if (pos.account !== null) s.markDirty(pos.account);
  }
  s.emit({ type: 'instrumentConfigured', symbol: spec.symbol, config: configOf(spec), added: false });
  return { ok: true, code: 'OK', events: s.end() };
}
