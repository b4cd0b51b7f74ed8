/// <reference lib="dom" />
/**
 * One live view's data source: its WebSocket stream while that delivers, REST polling while it does
 * not (the socket cannot connect, the connection dropped, or the subscribe was refused). A feed
 * counts as live from its stream's snapshot (or private resume) until its connection leaves the
 * `open` state or the subscription ends in an error; a poll answer that lands after the stream came
 * back is dropped, so an older REST read never overwrites newer streamed state.
 */
import type { ConnectionState, StreamClient, StreamHandlers, StreamSubscription } from '@tokex/sdk/stream-client';

/** connecting: waiting for the first snapshot; polling: REST reads stand in for the stream; unavailable: no stream and nothing to poll with. */
export type FeedState = 'connecting' | 'live' | 'polling' | 'unavailable';

export const POLL_MS = 2_000;

export interface FeedPoll<P> {
  /** How often, ms (default POLL_MS). */
  everyMs?: number;
  read(): Promise<P>;
  apply(data: P): void;
}

export interface FeedOptions<S, U, P> {
  /** Shown to the user when the feed is not live, e.g. `quotes AAPL`. */
  name: string;
  channel: string;
  symbol?: string;
  onSnapshot(data: S): void;
  onUpdate(data: U): void;
  /** Without it (no credentials for REST) a feed whose stream is down is `unavailable`. */
  poll?: FeedPoll<P>;
  /**
   * False: the stream cannot serve this view (the stock stream serves the first chain's private
   * channels only, and another chain is chosen), so the feed polls REST from the start.
   */
  stream?: boolean;
}

export interface Feed {
  readonly name: string;
  readonly state: FeedState;
  /** The last stream refusal or poll failure, for the status line. */
  readonly problem: string | undefined;
  stop(): Promise<void>;
}

/** The feeds of one stream client, reporting every state change to `onChange`. */
export class FeedGroup {
  readonly #client: StreamClient<any, any>;
  readonly #feeds = new Set<FeedImpl>();
  readonly #onChange: () => void;

  constructor(client: StreamClient<any, any>, onChange: () => void) {
    this.#client = client;
    this.#onChange = onChange;
    client.on('state', (state: ConnectionState) => {
      if (state === 'open') return;
      // The snapshot (or resume) after the reconnect makes each feed live again.
      for (const f of this.#feeds) f.lost();
    });
  }

  get feeds(): readonly Feed[] {
    return [...this.#feeds];
  }

  start<S = unknown, U = S, P = unknown>(opts: FeedOptions<S, U, P>): Feed {
    const feed = new FeedImpl(opts, this.#onChange, (f) => this.#feeds.delete(f));
    this.#feeds.add(feed);
    if (opts.stream !== false) feed.subscribe(this.#client);
    this.#onChange();
    return feed;
  }
}

class FeedImpl implements Feed {
  state: FeedState = 'connecting';
  problem: string | undefined;
  readonly name: string;
  #live = false;
  #stopped = false;
  #inFlight = false;
  #sub: StreamSubscription | undefined;
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly opts: FeedOptions<any, any, any>,
    private readonly onChange: () => void,
    private readonly forget: (f: FeedImpl) => void,
  ) {
    this.name = opts.name;
    this.#timer = setInterval(() => this.#tick(), opts.poll?.everyMs ?? POLL_MS);
  }

  subscribe(client: StreamClient<any, any>): void {
    const handlers: StreamHandlers<any, any> = {
      onSnapshot: (data) => {
        if (this.#stopped) return;
        this.#setLive();
        this.opts.onSnapshot(data);
      },
      onUpdate: (data) => {
        if (this.#stopped) return;
        this.opts.onUpdate(data);
      },
      onResume: () => this.#setLive(),
      onError: (err) => {
        // Refused for good (the client does not retry it): REST from now on.
        this.problem = `${this.name}: ${err.message}`;
        this.lost();
      },
    };
    const options: any = this.opts.symbol === undefined ? undefined : { symbol: this.opts.symbol };
    this.#sub = client.subscribe(this.opts.channel, options, handlers);
  }

  lost(): void {
    if (!this.#live) return;
    this.#live = false;
    this.#set('connecting');
  }

  #setLive(): void {
    this.#live = true;
    this.problem = undefined;
    this.#set('live');
  }

  #set(state: FeedState): void {
    if (this.state === state) return;
    this.state = state;
    this.onChange();
  }

  #tick(): void {
    if (this.#live || this.#stopped || this.#inFlight) return;
    const poll = this.opts.poll;
    if (!poll) {
      this.#set('unavailable');
      return;
    }
    this.#inFlight = true;
    poll
      .read()
      .then((data) => {
        if (this.#live || this.#stopped) return;
        poll.apply(data);
        this.#set('polling');
      })
      .catch((err: unknown) => {
        if (this.#live || this.#stopped) return;
        this.problem = `${this.name}: ${err instanceof Error ? err.message : String(err)}`;
        this.state = 'polling';
        this.onChange();
      })
      .finally(() => {
        this.#inFlight = false;
      });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.forget(this);
    this.onChange();
    await this.#sub?.unsubscribe().catch(() => undefined);
  }
}

/**
 * The one-line summary of every feed, for the page's status region. `stale` names the prices shown
 * whose own time stopped moving (freshness.ts), `staleAfterMs` the age that makes them so: the line
 * says stale first, whatever the sockets' state, since an open socket proves nothing about the prices.
 */
export function describeFeeds(feeds: readonly Feed[], stale: readonly string[] = [], staleAfterMs = 0): string {
  if (feeds.length === 0 && stale.length === 0) return '';
  const polling = feeds.filter((f) => f.state === 'polling');
  const unavailable = feeds.filter((f) => f.state === 'unavailable');
  const names = (ns: readonly string[]) => {
    const shown = ns.slice(0, 4);
    return ns.length > shown.length ? `${shown.join(', ')} and ${ns.length - shown.length} more` : shown.join(', ');
  };
  const parts: string[] = [];
  if (stale.length > 0) parts.push(`stale, no new price for ${names(stale)} in over ${Math.round(staleAfterMs / 1000)} s`);
  if (polling.length > 0) parts.push(`streams unavailable, polling the REST APIs instead for ${names(polling.map((f) => f.name))}`);
  if (unavailable.length > 0) parts.push(`streams unavailable and no key to poll the REST APIs with, for ${names(unavailable.map((f) => f.name))}`);
  const problem = feeds.find((f) => f.state !== 'live' && f.problem !== undefined)?.problem;
  if (parts.length > 0) return `Live data: ${parts.join('; ')}.${problem ? ` Last problem: ${problem}.` : ''}`;
  if (feeds.every((f) => f.state === 'live')) return 'Live data: streaming.';
  return 'Live data: connecting…';
}
