/**
 * Dotted paths into JSON bodies, as provider definitions write them: `authed_user.access_token`,
 * `error.errors[*].reason` (every item of an array).
 */
export function readPath(body: unknown, path: string): unknown[] {
  let values: unknown[] = [body];
  for (const part of path.split('.')) {
    const spread = part.endsWith('[*]');
    const name = spread ? part.slice(0, -3) : part;
    const next: unknown[] = [];
    for (const value of values) {
      if (!value || typeof value !== 'object' || Array.isArray(value)) continue;
      if (!Object.hasOwn(value, name)) continue;
      const child = (value as Record<string, unknown>)[name];
      if (spread) {
        if (Array.isArray(child)) next.push(...child);
      } else next.push(child);
    }
    values = next;
  }
  return values;
}

/** The value at a path that names one value (no `[*]`), or undefined. */
export function readOne(body: unknown, path: string): unknown {
  return readPath(body, path)[0];
}

/** Whether any value at `path` is one of `equals`. */
export function matches(body: unknown, match: { path: string; equals: ReadonlyArray<unknown> }): boolean {
  return readPath(body, match.path).some((value) => match.equals.includes(value as never));
}
