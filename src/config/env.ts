/** Reading typed settings from the environment, one definition for every settings module. */
import { AppError } from '../errors/app-error.ts';

export type Env = NodeJS.ProcessEnv;

function invalid(name: string, why: string): AppError {
  return new AppError('VALIDATION', `${name}: ${why}`);
}

/** The variable's text, or undefined when unset or empty. */
export function envString(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? undefined : raw;
}

/** A whole number ≥ `minimum` (default 0), or `fallback` when unset. */
export function envInt(env: Env, name: string, fallback: number, minimum = 0): number {
  const raw = envString(env, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < minimum) {
    throw invalid(name, `must be an integer of at least ${minimum}`);
  }
  return n;
}

/** `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off` (any case), or `fallback` when unset. */
export function envBool(env: Env, name: string, fallback: boolean): boolean {
  const raw = envString(env, name);
  if (raw === undefined) return fallback;
  const v = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw invalid(name, 'must be true or false');
}

/** One of `choices`, or `fallback` when unset. */
export function envChoice<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  const raw = envString(env, name);
  if (raw === undefined) return fallback;
  if (!(choices as readonly string[]).includes(raw)) throw invalid(name, `one of ${choices.join(', ')}`);
  return raw as T;
}

/** A comma-separated list, trimmed, without empty entries. */
export function envList(env: Env, name: string): string[] {
  return (envString(env, name) ?? '').split(',').map((s) => s.trim()).filter((s) => s.length > 0);
}
