import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { type FieldError, invalidInput, type Problem } from '../errors/problem.js';

// ajv-formats ships CommonJS; its default export is the function.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * JSON Schema validation for request bodies, query strings and CLI input. Bodies are validated as
 * sent (no coercion, unknown fields rejected); query strings arrive as text and are coerced.
 */
function createAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
    // verbose keeps the failing schema on each error, so messages can quote its description.
    verbose: true,
  });
  addFormats(ajv);
  return ajv;
}

export const bodyAjv = createAjv(false);
export const queryAjv = createAjv(true);

/** Ajv errors as field errors whose messages say what to change. */
export function toFieldErrors(errors: ErrorObject[] | null | undefined, root = ''): FieldError[] {
  const out: FieldError[] = [];
  // A union of constants (TypeBox literals) fails as one "must be equal to constant" per branch plus
  // "must match a schema in anyOf": say once which values are allowed instead.
  const constants = new Map<string, unknown[]>();
  for (const error of errors ?? []) {
    if (error.keyword !== 'const') continue;
    const list = constants.get(error.instancePath) ?? [];
    list.push((error.params as { allowedValue: unknown }).allowedValue);
    constants.set(error.instancePath, list);
  }
  for (const error of errors ?? []) {
    let path = `${root}${error.instancePath}`;
    const allowed = constants.get(error.instancePath);
    if (allowed && (error.keyword === 'const' || error.keyword === 'anyOf')) {
      const message = `must be one of: ${allowed.map(String).join(', ')}`;
      if (!out.some((e) => e.path === (path || '/') && e.message === message))
        out.push({ path: path || '/', message });
      continue;
    }
    let message: string;
    const params = error.params as Record<string, unknown>;
    switch (error.keyword) {
      case 'required':
        path = `${path}/${String(params.missingProperty)}`;
        message = 'is required';
        break;
      case 'additionalProperties':
        path = `${path}/${String(params.additionalProperty)}`;
        message = `is not a known field; remove it${knownFields(error)}`;
        break;
      case 'type':
        message = `must be ${article(String(params.type))}`;
        break;
      case 'enum':
        message = `must be one of: ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
        break;
      case 'format':
        message = `must be a valid ${String(params.format)}`;
        break;
      case 'pattern':
        message = describePattern(error);
        break;
      default:
        message = error.message ?? 'is invalid';
    }
    if (!out.some((e) => e.path === path && e.message === message)) out.push({ path: path || '/', message });
  }
  return out;
}

function knownFields(error: ErrorObject): string {
  const props = (error.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return props ? ` (known fields: ${Object.keys(props).join(', ')})` : '';
}

function describePattern(error: ErrorObject): string {
  const description = (error.parentSchema as { description?: string } | undefined)?.description;
  return description
    ? `does not match the expected form: ${description}`
    : `must match ${String((error.params as { pattern: string }).pattern)}`;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** One sentence naming every field that must change, for the problem's `detail`. */
export function summarize(errors: FieldError[], what = 'The request'): string {
  const parts = errors
    .slice(0, 5)
    .map((e) => `${e.path.replace(/^\//, '').replaceAll('/', '.') || 'body'} ${e.message}`);
  const more = errors.length > 5 ? ` (and ${errors.length - 5} more)` : '';
  return `${what} is invalid: ${parts.join('; ')}${more}.`;
}

export function validationProblem(errors: FieldError[], what?: string): Problem {
  return invalidInput(summarize(errors, what), errors);
}

/** Compiles once; the returned function throws an `invalid_input` Problem on bad input (callers outside HTTP routes, e.g. gRPC). */
export function compileValidator<T>(schema: object, what?: string): (value: unknown) => T {
  const validate: ValidateFunction = bodyAjv.compile(schema);
  return (value: unknown) => {
    if (!validate(value)) throw validationProblem(toFieldErrors(validate.errors), what);
    return value as T;
  };
}

/**
 * Route validators that compile at their route's first request, or soon after the server listens,
 * whichever comes first: compiling every route's schema up front was a tenth of a restart. A
 * schema that does not compile is logged when the background pass meets it, and its route answers
 * 500 until fixed (the API's tests compile every route's schema).
 */
export class DeferredValidators {
  private readonly pending: Array<() => void> = [];

  /** A Fastify validator for `schema`: returns whether data is valid, errors on itself. */
  validator(
    ajv: typeof bodyAjv,
    schema: object,
  ): ((data: unknown) => boolean) & { errors?: ErrorObject[] | null } {
    let compiled: ValidateFunction | undefined;
    const compile = () => {
      compiled ??= ajv.compile(schema);
      return compiled;
    };
    const validate = (data: unknown): boolean => {
      const fn = compile();
      const ok = fn(data) as boolean;
      validate.errors = fn.errors;
      return ok;
    };
    validate.errors = null as ErrorObject[] | null | undefined;
    this.pending.push(compile);
    return validate;
  }

  /** Compiles what is left, one schema per turn of the event loop so requests are not held up. */
  compileInBackground(onError: (error: unknown) => void): void {
    const next = () => {
      const compile = this.pending.shift();
      if (!compile) return;
      try {
        compile();
      } catch (error) {
        onError(error);
      }
      setImmediate(next).unref();
    };
    setImmediate(next).unref();
  }
}
