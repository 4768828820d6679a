// Dotted paths into JSON bodies, as provider definitions write them: `authed_user.access_token`,
// `data[*].id` ([*] after a name: the items of an array).

interface Step {
  name: string;
  /** The step is `name[*]`: an array, of which the emulator writes (and reads) the first item. */
  each: boolean;
}

function steps(path: string): Step[] {
  return path.split('.').map((part) => {
    const each = part.endsWith('[*]');
    return { name: each ? part.slice(0, -3) : part, each };
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The object a step leads to, created when absent; `[*]` yields the array's one item. */
function child(target: Record<string, unknown>, step: Step): Record<string, unknown> {
  if (step.each) {
    let list = target[step.name];
    if (!Array.isArray(list)) {
      list = [];
      target[step.name] = list;
    }
    const items = list as unknown[];
    if (!isObject(items[0])) items[0] = {};
    return items[0] as Record<string, unknown>;
  }
  const next = target[step.name];
  if (isObject(next)) return next;
  const created: Record<string, unknown> = {};
  target[step.name] = created;
  return created;
}

/**
 * Writes `value` at `path`, creating the objects on the way. A `[*]` step creates an array with one
 * object, so `data[*].id` and `data[*].email` land in the same item.
 */
export function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const all = steps(path);
  const last = all.pop()!;
  let cursor = target;
  for (const step of all) cursor = child(cursor, step);
  cursor[last.name] = last.each ? [value] : value;
}

/** The path of the object that holds the last step (`authed_user` for `authed_user.access_token`), if any. */
export function parentPath(path: string): string | undefined {
  const dot = path.lastIndexOf('.');
  return dot < 0 ? undefined : path.slice(0, dot);
}
