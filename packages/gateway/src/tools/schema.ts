import { type SchemaOptions, type TUnsafe, Type } from '@sinclair/typebox';

/**
 * A string from a fixed list, as a plain JSON Schema `{type: "string", enum}`: agent frameworks read
 * it directly, and a wrong value is reported as "must be one of: …" (a union of literals would report
 * one "must be equal to constant" per branch). `options` may be just the description.
 */
export function stringEnum<const T extends readonly string[]>(
  values: T,
  options: SchemaOptions | string = {},
): TUnsafe<T[number]> {
  const rest = typeof options === 'string' ? { description: options } : options;
  return Type.Unsafe<T[number]>({ ...rest, type: 'string', enum: [...values] });
}
