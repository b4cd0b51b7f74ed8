/** Rewrites openapi/stock-api.json from the route schemas (`npm run openapi`). */
import fs from 'node:fs';
import { generateStockOpenApi } from '../src/stock/stock-openapi.ts';

const doc = await generateStockOpenApi();
fs.mkdirSync('openapi', { recursive: true });
fs.writeFileSync('openapi/stock-api.json', JSON.stringify(doc, null, 2) + '\n');
process.stdout.write('wrote openapi/stock-api.json\n');
