/** The gateway speaks snake_case JSON; the SDK's objects are camelCase. Top-level keys only. */
export function camelKeys<T>(record: Record<string, unknown>): T {
  return Object.fromEntries(
    Object.entries(record).map(([key, value]) => [
      key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()),
      value,
    ]),
  ) as T;
}

export function snakeKeys(record: object): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(record)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => [key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), value]),
  );
}
