/**
 * Compares the OpenAPI documents the routes generate now with openapi/*.json as committed, by value
 * (object keys in any order): `tsx scripts/compare-openapi.ts` prints each difference by its JSON
 * path and exits 1 when there is one. For reviewing a change to the schemas that should not change
 * what the documents say.
 */
import fs from 'node:fs';
import { generatePerpOpenApi } from '../src/perp/perp-openapi.ts';
import { generateStockOpenApi } from '../src/stock/stock-openapi.ts';

function differences(a: unknown, b: unknown, path: string, out: string[]): void {
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) out.push(`${path}: ${a.length} items were ${b.length}`);
    for (let i = 0; i < Math.min(a.length, b.length); i++) differences(a[i], b[i], `${path}[${i}]`, out);
    return;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a as object);
    const kb = Object.keys(b as object);
    for (const k of ka) if (!kb.includes(k)) out.push(`${path}.${k}: added ${JSON.stringify((a as Record<string, unknown>)[k]).slice(0, 200)}`);
    for (const k of kb) if (!ka.includes(k)) out.push(`${path}.${k}: removed ${JSON.stringify((b as Record<string, unknown>)[k]).slice(0, 200)}`);
    for (const k of ka) if (kb.includes(k)) differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`, out);
    return;
  }
  if (a !== b) out.push(`${path}: ${JSON.stringify(a)} was ${JSON.stringify(b)}`);
}

let failed = false;
for (const [file, generate] of [
  ['openapi/stock-api.json', generateStockOpenApi],
  ['openapi/perp-api.json', generatePerpOpenApi],
] as const) {
  const now = JSON.parse(JSON.stringify(await generate()));
  const before = JSON.parse(fs.readFileSync(file, 'utf8'));
  const out: string[] = [];
  differences(now, before, '$', out);
  process.stdout.write(`${file}: ${out.length === 0 ? 'the same by value' : `${out.length} differences`}\n`);
  for (const line of out) process.stdout.write(`  ${line}\n`);
  failed ||= out.length > 0;
}
process.exitCode = failed ? 1 : 0;
