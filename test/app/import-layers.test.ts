/**
 * Imports run one way. Each top folder of src/ has a layer; a module may import its own folder and
 * folders of lower layers only. From the design: errors, lib and config at the bottom; storage, then
 * the chain and HTTP machinery; auth, market data, the generic indexer and the streams' machinery on
 * top of those; the venue
 * domains (stock, perp) above every shared layer; app (wiring), sdk and the CLI at the top.
 * Inside a domain, data flows route → service → store and chain → indexer → store: a store imports
 * nothing of its domain outside store/, and routes, indexer and executor do not import each other.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

const LAYERS: Record<string, number> = {
  errors: 0,
  lib: 1,
  config: 2,
  storage: 3,
  // Role progress, readiness and metrics: read by the network layers (http, streams), reading storage.
  observability: 3.5,
  chain: 4,
  http: 4,
  auth: 5,
  marketdata: 5,
  indexer: 5,
  streams: 5,
  stock: 6,
  perp: 6,
  sdk: 7,
  console: 7,
  // The sandbox control API (docs/sandbox.md): above the domains it drives, below the wiring.
  sandbox: 7,
  app: 8,
  cli: 9,
};

const DOMAINS = new Set(['stock', 'perp']);
/** Parts of a domain that must not import each other (each may import the domain's shared modules and store/). */
const DOMAIN_PARTS = ['routes', 'indexer', 'executor', 'relayer'];

type Files = Map<string, string>;

function sourceFiles(dir: string, root = dir, out: Files = new Map()): Files {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(full, root, out);
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
      out.set(path.relative(root, full).split(path.sep).join('/'), fs.readFileSync(full, 'utf8'));
    }
  }
  return out;
}

/** Relative specifiers of static imports, re-exports and dynamic imports; comments ignored. */
function importsOf(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const specs: string[] = [];
  for (const m of code.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) specs.push(m[1]);
  return specs;
}

/** Every import that breaks the layering, as `from -> to: why`. */
function layerViolations(files: Files): string[] {
  const out: string[] = [];
  for (const [file, text] of files) {
    const [top, ...rest] = file.split('/');
    if (rest.length === 0) continue; // a file directly in src/ (none today) has no layer
    for (const spec of importsOf(text)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
      const [targetTop, ...targetRest] = target.split('/');
      if (target.startsWith('..')) {
        out.push(`${file} -> ${spec}: outside src/`);
        continue;
      }
      if (!(top in LAYERS)) {
        out.push(`${file}: src/${top} has no layer in LAYERS`);
        break;
      }
      if (!(targetTop in LAYERS)) {
        out.push(`${file} -> ${target}: src/${targetTop} has no layer in LAYERS`);
        continue;
      }
      if (targetTop !== top && LAYERS[targetTop] >= LAYERS[top]) {
        out.push(`${file} -> ${target}: ${top} (layer ${LAYERS[top]}) may not import ${targetTop} (layer ${LAYERS[targetTop]})`);
        continue;
      }
      const inside = (f: string, dir: string) => f.startsWith(`perp/${dir}/`);
      // The engine core is pure: it imports nothing outside src/perp/engine (node: builtins aside).
      if (inside(file, 'engine') && !inside(target, 'engine')) {
        out.push(`${file} -> ${target}: the engine core imports nothing outside perp/engine/`);
        continue;
      }
      if (top === 'perp' && targetTop === 'perp') {
        // The journal (sequencer/) imports only the core, its own store and itself.
        if (inside(file, 'sequencer') && !inside(target, 'engine') && !inside(target, 'sequencer') && target !== 'perp/store/engine-journal-store.ts') {
          out.push(`${file} -> ${target}: the journal imports only the engine core and its store`);
          continue;
        }
      }
      if (targetTop === top && DOMAINS.has(top)) {
        const part = rest.length > 1 ? rest[0] : undefined;
        const targetPart = targetRest.length > 1 ? targetRest[0] : undefined;
        if (part === 'store' && targetPart !== 'store') out.push(`${file} -> ${target}: a store imports nothing of its domain outside store/`);
        else if (part && targetPart && part !== targetPart && DOMAIN_PARTS.includes(part) && DOMAIN_PARTS.includes(targetPart)) {
          out.push(`${file} -> ${target}: ${part}/ may not import ${targetPart}/`);
        }
      }
    }
  }
  return out;
}

describe('import layers', () => {
  it('src/ imports only downwards', () => {
    const files = sourceFiles(SRC);
    expect(files.size).toBeGreaterThan(50);
    expect(layerViolations(files)).toEqual([]);
  });

  it('every top folder of src/ has a layer', () => {
    const folders = fs.readdirSync(SRC, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(folders.filter((f) => !(f in LAYERS))).toEqual([]);
  });

  it('reports an upward import, a sibling import and a store reaching into its domain', () => {
    const files: Files = new Map([
      ['storage/candle-store.ts', "import type { Candle } from '../marketdata/market-types.ts';"],
      ['chain/deploy-contracts.ts', "import { DEMO_SYMBOLS } from '../marketdata/symbol-catalog.ts';"],
      ['config/app-config.ts', "export { x } from '../stock/executor/executor-config.ts';"],
      ['auth/key.ts', "const m = await import('../marketdata/quote-cache.ts');"],
      ['stock/store/order-store.ts', "import { parseOrder } from '../order-request.ts';"],
      ['stock/routes/orders-routes.ts', "import { createStockExecutor } from '../executor/stock-executor.ts';"],
      ['marketdata/ok.ts', "// import { x } from '../stock/no.ts'\nimport { y } from '../storage/database.ts';\nimport { z } from './market-types.ts';"],
      ['stock/routes/ok-routes.ts', "import { a } from '../store/stock-order-store.ts';\nimport { b } from '../stock-units.ts';"],
      ['perp/engine/risk/margin.ts', "import { parseDecimal } from '../../../lib/decimal.ts';\nimport { x } from '../../perp-views.ts';\nimport { y } from '../state/entities.ts';"],
      ['perp/sequencer/engine-gateway.ts', "import { a } from '../engine/perp-engine.ts';\nimport { b } from '../store/engine-journal-store.ts';\nimport { c } from '../workers/funding-task.ts';"],
    ]);
    expect(layerViolations(files)).toEqual([
      'storage/candle-store.ts -> marketdata/market-types.ts: storage (layer 3) may not import marketdata (layer 5)',
      'chain/deploy-contracts.ts -> marketdata/symbol-catalog.ts: chain (layer 4) may not import marketdata (layer 5)',
      'config/app-config.ts -> stock/executor/executor-config.ts: config (layer 2) may not import stock (layer 6)',
      'auth/key.ts -> marketdata/quote-cache.ts: auth (layer 5) may not import marketdata (layer 5)',
      'stock/store/order-store.ts -> stock/order-request.ts: a store imports nothing of its domain outside store/',
      'stock/routes/orders-routes.ts -> stock/executor/stock-executor.ts: routes/ may not import executor/',
      'perp/engine/risk/margin.ts -> lib/decimal.ts: the engine core imports nothing outside perp/engine/',
      'perp/engine/risk/margin.ts -> perp/perp-views.ts: the engine core imports nothing outside perp/engine/',
      'perp/sequencer/engine-gateway.ts -> perp/workers/funding-task.ts: the journal imports only the engine core and its store',
    ]);
  });
});
