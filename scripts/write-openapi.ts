/** Rewrites openapi/stock-api.json and openapi/perp-api.json from the route schemas (`npm run openapi`). */
import fs from 'node:fs';
import { generateStockOpenApi } from '../src/stock/stock-openapi.ts';
import { generatePerpOpenApi } from '../src/perp/perp-openapi.ts';

fs.mkdirSync('openapi', { recursive: true });
for (const [file, generate] of [
  ['openapi/stock-api.json', generateStockOpenApi],
  ['openapi/perp-api.json', generatePerpOpenApi],
] as const) {
  const doc = await generate();
  fs.writeFileSync(file, JSON.stringify(doc, null, 2) + '\n');
  process.stdout.write(`wrote ${file}\n`);
}
