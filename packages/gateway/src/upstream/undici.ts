/**
 * undici, loaded at its first use rather than at start: it was about 70 ms of a restart, and a
 * gateway answers its API and health checks without it. `UpstreamHttp.warm` loads it in the
 * background once the gateway listens, so a first provider call rarely waits for it.
 */
let loading: Promise<typeof import('undici')> | undefined;

export function loadUndici(): Promise<typeof import('undici')> {
  loading ??= import('undici');
  return loading;
}

/** undici's error codes, stable across its versions: they are matched without loading it. */
export const UNDICI_ERRORS = {
  connectTimeout: 'UND_ERR_CONNECT_TIMEOUT',
  socket: 'UND_ERR_SOCKET',
  headersTimeout: 'UND_ERR_HEADERS_TIMEOUT',
  bodyTimeout: 'UND_ERR_BODY_TIMEOUT',
  invalidArgument: 'UND_ERR_INVALID_ARG',
  notSupported: 'UND_ERR_NOT_SUPPORTED',
} as const;
