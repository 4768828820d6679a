/**
 * The V8 flags the gateway runs best with. V8 reads them only when node starts, so `npm start`
 * passes them on its command line and the container image in NODE_OPTIONS (a test keeps both in
 * step with this list); `portico start` names the ones missing in its start-up log.
 * - `--max-semi-space-size=32`: the proxy allocates a little per request; in Node's default young
 *   generation some processes spent a fifth of their time collecting garbage.
 * - `--initial-old-space-size=128`: an upload allocates its body in Buffers outside the heap, and
 *   V8 counts them toward its limit for a full collection; under the default limit a stream of
 *   1 MiB uploads made one every dozen requests and GC was half their CPU (bench:proxy: 4.8 → 2.7
 *   ms per upload). The limit is a threshold, not a reservation.
 */
export const NODE_FLAGS = ['--max-semi-space-size=32', '--initial-old-space-size=128'] as const;

/** The recommended flags this process was started without (command line or NODE_OPTIONS). */
export function missingNodeFlags(): string[] {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return NODE_FLAGS.filter((flag) => !given.some((arg) => arg.startsWith(flag.split('=')[0]!)));
}
