import { expect, it } from 'vitest';
import { useVenue } from '@tokex/testkit/vitest';

const ctx = useVenue(); // one venue for the file, put back to its snapshot before each test

it('BTC falls to 63,000 and a rate-limited call is retried', async () => {
  const { venue } = ctx;
  await venue.prices.set('BTC', '63000'); // answered once the quote and the perpetual index show it
  expect((await venue.perp.getTickers({ symbol: 'BTC-USD' }))[0].indexPrice).toBe('63000');
  await venue.faults.add({ kind: 'rate-limit', apiKey: venue.perp.apiKey, count: 1 });
  expect((await venue.perp.getAccount()).balance).toBe('10000'); // the SDK waited out the 429
});
