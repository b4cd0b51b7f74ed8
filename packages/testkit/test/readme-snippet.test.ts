/**
 * The README's test in ten lines ("Testing your client against a venue") is examples/readme-test/venue.test.ts
 * word for word, and that file runs in `npm test`: what the README shows is what passes. Its fence is
 * ```typescript, not ```ts: a Vitest file is not a script the README walkthrough could run with tsx
 * (test/readme/readme-blocks.ts runs ```ts blocks so), and this check stands in for that run.
 */
import fs from 'node:fs';
import { expect, it } from 'vitest';

const root = new URL('../../../', import.meta.url);

it('the README shows examples/readme-test/venue.test.ts as it is', () => {
  const readme = fs.readFileSync(new URL('README.md', root), 'utf8');
  const blocks = [...readme.matchAll(/^```typescript\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  const shown = blocks.filter((b) => b.includes("from '@tokex/testkit/vitest'"));
  expect(shown).toHaveLength(1);
  expect(shown[0]).toBe(fs.readFileSync(new URL('examples/readme-test/venue.test.ts', root), 'utf8'));
});
