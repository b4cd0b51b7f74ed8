/**
 * Rewrites the role table of docs/security.md ("Who holds which role") from src/chain/venue-roles.ts,
 * the one place it is kept; test/chain/venue-roles.test.ts fails while the two differ.
 * Usage: npx tsx scripts/write-role-table.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { withRenderedRoleTables } from '../src/chain/venue-roles.ts';

const file = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'security.md');
const before = readFileSync(file, 'utf8');
const after = withRenderedRoleTables(before);
if (after !== before) writeFileSync(file, after);
process.stdout.write(`${file}: ${after === before ? 'the role table is current' : 'role table rewritten'}\n`);
