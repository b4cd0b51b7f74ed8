// autocannon ships no types; the benchmark uses a small part of its API.
declare module 'autocannon' {
  namespace autocannon {
    type Options = Record<string, unknown> & { url: string };
    interface Result {
      requests: { average: number; total: number };
      latency: { p50: number; p99: number };
      errors: number;
      non2xx: number;
    }
  }
  function autocannon(opts: autocannon.Options): Promise<autocannon.Result>;
  export default autocannon;
}
