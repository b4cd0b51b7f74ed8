/// <reference lib="dom" />
/** The few DOM helpers the console's views share. */

export type Row = Record<string, any>;

export const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

export const el = (tag: string, text?: string, cls?: string) => {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
};

export function report(err: unknown): void {
  $('errors').textContent = err instanceof Error ? err.message : String(err);
}

/** Exact comparison of non-negative decimal strings (book prices), no float rounding. */
export function compareDecimal(a: string, b: string): number {
  const [ai, af = ''] = a.split('.');
  const [bi, bf = ''] = b.split('.');
  const x0 = ai.replace(/^0+(?=\d)/, '');
  const y0 = bi.replace(/^0+(?=\d)/, '');
  if (x0.length !== y0.length) return x0.length - y0.length;
  if (x0 !== y0) return x0 < y0 ? -1 : 1;
  const n = Math.max(af.length, bf.length);
  const x = af.padEnd(n, '0');
  const y = bf.padEnd(n, '0');
  return x === y ? 0 : x < y ? -1 : 1;
}

export const isZero = (s: unknown) => compareDecimal(String(s ?? '0').replace('-', ''), '0') === 0;

/** Decimal strings as scaled bigints, for exact sums (book totals, balances). */
export function toScaled(s: string, decimals: number): bigint {
  const neg = s.startsWith('-');
  const [i, f = ''] = (neg ? s.slice(1) : s).split('.');
  const v = BigInt(i || '0') * 10n ** BigInt(decimals) + BigInt((f.slice(0, decimals).padEnd(decimals, '0')) || '0');
  return neg ? -v : v;
}

export function fromScaled(v: bigint, decimals: number): string {
  const neg = v < 0n;
  const a = neg ? -v : v;
  const base = 10n ** BigInt(decimals);
  const s = decimals > 0 ? `${a / base}.${String(a % base).padStart(decimals, '0')}` : String(a);
  return neg ? `-${s}` : s;
}

export const actionButton = (text: string, what: string, onClick: (b: HTMLButtonElement) => void) => {
  const button = el('button', text) as HTMLButtonElement;
  button.type = 'button';
  button.setAttribute('aria-description', `${text} ${what}`);
  button.addEventListener('click', () => onClick(button));
  return button;
};

/** `2026-11-26T00:31:02Z`: times in ISO, as the CLI prints them. */
export const isoTime = (ms: unknown) => {
  const n = Number(ms);
  return Number.isFinite(n) && n > 0 ? new Date(n).toISOString().replace(/\.\d{3}Z$/, 'Z') : '';
};
