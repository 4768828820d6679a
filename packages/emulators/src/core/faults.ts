import type { EmulatorKey } from './types.js';

/** A fault to inject, as given to the control API (snake_case on the wire, camelCase in process). */
export interface FaultSpec {
  /** Restrict to one emulator's prefix. */
  emulator?: EmulatorKey;
  method?: string;
  /** Regex source matched against the path within the emulator root, e.g. "^/notion/v1/users". */
  path: string;
  /** Regex source the query string (without "?") must match too, e.g. "syncToken=". */
  query?: string;
  /** Canned status; absent with `latencyMs` means "delay, then handle normally". */
  status?: number;
  headers?: Record<string, string>;
  /** Canned body: objects are sent as JSON, strings as given. */
  body?: unknown;
  latencyMs?: number;
  /** Destroy the socket without answering. */
  drop?: boolean;
  /** How many matching requests get the fault (default 1). */
  times?: number;
}

export interface ActiveFault {
  id: string;
  spec: FaultSpec;
  pattern: RegExp;
  queryPattern?: RegExp;
  remaining: number;
}

/** Faults waiting for their next matching requests; each match consumes one use. */
export class FaultStore {
  private faults: ActiveFault[] = [];
  private seq = 0;

  add(spec: FaultSpec): ActiveFault {
    const pattern = new RegExp(spec.path);
    const times = spec.times ?? 1;
    if (!Number.isInteger(times) || times < 1) throw new Error('times must be a positive integer');
    const fault: ActiveFault = {
      id: `fault_${++this.seq}`,
      spec,
      pattern,
      ...(spec.query === undefined ? {} : { queryPattern: new RegExp(spec.query) }),
      remaining: times,
    };
    this.faults.push(fault);
    return fault;
  }

  clear(): void {
    this.faults = [];
  }

  list(): ActiveFault[] {
    return [...this.faults];
  }

  /** Finds and consumes the first fault matching this request. */
  take(emulator: EmulatorKey, method: string, path: string, query = ''): FaultSpec | undefined {
    const index = this.faults.findIndex(
      (f) =>
        (f.spec.emulator === undefined || f.spec.emulator === emulator) &&
        (f.spec.method === undefined || f.spec.method.toUpperCase() === method.toUpperCase()) &&
        f.pattern.test(path) &&
        (f.queryPattern === undefined || f.queryPattern.test(query)),
    );
    if (index < 0) return undefined;
    const fault = this.faults[index]!;
    fault.remaining--;
    if (fault.remaining <= 0) this.faults.splice(index, 1);
    return fault.spec;
  }
}
