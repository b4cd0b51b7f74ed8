/**
 * The subscribers of the stream fan-out bench, in a process of their own (bench/stream-fanout-bench.ts):
 * N WebSocket connections each subscribed to one stream; counts the update frames they receive and
 * the delay from the `ts` in each frame's data to its arrival. Driven over IPC:
 * {connect: {url, count, subscribe}} → {ready}; {start} resets the counts; {stop} → {result}.
 */
import WebSocket from 'ws';

let sockets: WebSocket[] = [];
let frames = 0;
let started = 0;
let delays: number[] = [];
let keep: string[] = [];
const KEEP = 50_000;

function onFrame(text: string, first: boolean): void {
  if (text.charCodeAt(9) !== 117 /* {"type":"u… */) return;
  frames++;
  // Frames carry `"ts":<ms>` in their data; one sample in 16 is enough for the percentiles.
  if ((frames & 15) === 0) {
    const at = text.lastIndexOf('"ts":');
    if (at !== -1) delays.push(Date.now() - Number.parseInt(text.slice(at + 5), 10));
  }
  if (first && keep.length < KEEP) keep.push(text);
}

process.on('message', async (m: any) => {
  if (m.connect) {
    const { url, count, subscribe } = m.connect as { url: string; count: number; subscribe: unknown };
    const opened: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const ws = new WebSocket(url, { perMessageDeflate: false });
      const first = i === 0;
      opened.push(
        new Promise<void>((resolve, reject) => {
          ws.once('error', reject);
          ws.on('message', (data) => {
            const text = data.toString();
            if (text.startsWith('{"type":"subscribed"') || text === 'ready') resolve();
            else onFrame(text, first);
          });
          ws.once('open', () => {
            if (subscribe) ws.send(JSON.stringify(subscribe));
          });
        }),
      );
      sockets.push(ws);
    }
    await Promise.all(opened);
    process.send!({ ready: true });
  } else if (m.start) {
    frames = 0;
    delays = [];
    keep = [];
    started = Date.now();
  } else if (m.stop) {
    const seconds = (Date.now() - started) / 1000;
    delays.sort((a, b) => a - b);
    const pct = (p: number) => delays[Math.min(delays.length - 1, Math.floor(delays.length * p))] ?? 0;
    process.send!({ result: { frames, seconds, p50: pct(0.5), p99: pct(0.99), kept: m.keep ? keep : [] } });
  } else if (m.close) {
    for (const ws of sockets) ws.terminate();
    sockets = [];
    process.exit(0);
  }
});
