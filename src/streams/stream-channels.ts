/**
 * A venue's channels (contract.md §C): each one public (one stream per symbol) or private (one
 * stream per account, after `auth`), with the model its snapshot folds with.
 */
import type { ModelFactory } from './stream-model.ts';

export interface ChannelSpec {
  /** As clients name it: `depth`, `klines:1m`, `orders`… */
  name: string;
  scope: 'public' | 'private';
  model: ModelFactory;
  /** A private stream's snapshot before anything was ever published to it (an account with nothing yet). */
  empty?(subject: string): unknown;
}

export interface ChannelCatalog {
  get(name: string): ChannelSpec | undefined;
  list(): readonly ChannelSpec[];
}

export function channelCatalog(specs: readonly ChannelSpec[]): ChannelCatalog {
  const byName = new Map(specs.map((s) => [s.name, s]));
  return { get: (name) => byName.get(name), list: () => specs };
}

/** Channel and subject never hold a space (names, symbols and addresses). */
export const streamKey = (channel: string, subject: string): string => `${channel} ${subject}`;
