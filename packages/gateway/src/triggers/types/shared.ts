import { Type } from '@sinclair/typebox';

/** `changes` in a type's config: which of its changes the subscription reports (all by default). */
export function changesParam(names: readonly string[]) {
  return Type.Optional(
    Type.Array(Type.Union(names.map((n) => Type.Literal(n))), {
      minItems: 1,
      uniqueItems: true,
      description: `The changes to report: ${names.join(', ')} (all of them when left out).`,
    }),
  );
}

/** Epoch ms of an RFC 3339 time, or undefined when the provider gave none. */
export function epochOf(time: unknown): number | undefined {
  if (typeof time !== 'string') return undefined;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? undefined : ms;
}
