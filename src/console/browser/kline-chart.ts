/// <reference lib="dom" />
/** Candles drawn on the page's own canvas: no chart library. */

export interface Candle {
  openTime: number;
  open: string;
  high: string;
  low: string;
  close: string;
}

export function drawCandles(canvas: HTMLCanvasElement, candles: readonly Candle[]): void {
  const g = canvas.getContext('2d');
  if (!g) return;
  const { width, height } = canvas;
  g.clearRect(0, 0, width, height);
  const shown = candles.slice(-80);
  if (shown.length === 0) return;
  // Pixels only: the values shown as text stay the API's exact decimal strings.
  const num = (s: string) => Number(s);
  let lo = Infinity;
  let hi = -Infinity;
  for (const c of shown) {
    lo = Math.min(lo, num(c.low));
    hi = Math.max(hi, num(c.high));
  }
  if (hi === lo) {
    hi += 1;
    lo -= 1;
  }
  const pad = 8;
  const axis = 64;
  const y = (v: number) => pad + ((hi - v) / (hi - lo)) * (height - 2 * pad);
  const slot = (width - axis - pad) / Math.max(shown.length, 20);
  const body = Math.max(1, slot * 0.6);
  g.font = '11px system-ui, sans-serif';
  g.fillStyle = '#888';
  g.fillText(String(hi), width - axis + 4, pad + 8);
  g.fillText(String(lo), width - axis + 4, height - pad);
  shown.forEach((c, i) => {
    const x = pad + i * slot + slot / 2;
    const up = num(c.close) >= num(c.open);
    g.strokeStyle = g.fillStyle = up ? '#1a7f37' : '#cf222e';
    g.beginPath();
    g.moveTo(x, y(num(c.high)));
    g.lineTo(x, y(num(c.low)));
    g.stroke();
    const top = y(Math.max(num(c.open), num(c.close)));
    const bottom = y(Math.min(num(c.open), num(c.close)));
    g.fillRect(x - body / 2, top, body, Math.max(1, bottom - top));
  });
}
