/**
 * Two V8 heap snapshots side by side: retained objects and their self size by constructor (or
 * node type), largest differences first. `npx tsx bench/heap-diff.ts <a.heapsnapshot> <b.heapsnapshot> [rows]`
 */
import fs from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

function byConstructor(file: string): Map<string, { count: number; size: number }> {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [iType, iName, iSize] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const out = new Map<string, { count: number; size: number }>();
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const type = types[snap.nodes[i + iType]];
    const name = type === 'object' || type === 'closure' ? `${type} ${snap.strings[snap.nodes[i + iName]]}` : `(${type})`;
    const e = out.get(name) ?? { count: 0, size: 0 };
    e.count++;
    e.size += snap.nodes[i + iSize];
    out.set(name, e);
  }
  return out;
}

const [a, b, rows = '30'] = process.argv.slice(2);
const A = byConstructor(a);
const B = byConstructor(b);
const keys = new Set([...A.keys(), ...B.keys()]);
const diff = [...keys].map((k) => ({ k, a: A.get(k) ?? { count: 0, size: 0 }, b: B.get(k) ?? { count: 0, size: 0 } }));
diff.sort((x, y) => Math.abs(y.b.size - y.a.size) - Math.abs(x.b.size - x.a.size));
const total = (m: Map<string, { size: number }>) => [...m.values()].reduce((s, e) => s + e.size, 0);
console.log(`A ${(total(A) / 2 ** 20).toFixed(1)} MB, B ${(total(B) / 2 ** 20).toFixed(1)} MB`);
for (const { k, a: x, b: y } of diff.slice(0, Number(rows))) {
  console.log(`${((y.size - x.size) / 1024).toFixed(0).padStart(9)} KiB  ${String(x.count).padStart(8)} → ${String(y.count).padEnd(8)} ${k}`);
}
