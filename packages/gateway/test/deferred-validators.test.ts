import { describe, expect, it } from 'vitest';
import { bodyAjv, DeferredValidators } from '../src/validation/validator.js';

describe('route validators compiled on demand', () => {
  const schema = {
    type: 'object',
    properties: { name: { type: 'string', minLength: 1 } },
    required: ['name'],
    additionalProperties: false,
  };

  it('validates as the compiled schema would, errors included, however often it is called', () => {
    const validate = new DeferredValidators().validator(bodyAjv, schema);
    expect(validate({ name: 'a' })).toBe(true);
    expect(validate({})).toBe(false);
    expect(validate.errors?.[0]).toMatchObject({ keyword: 'required' });
    expect(validate({ name: 'b' })).toBe(true);
    expect(validate({ name: 'b', extra: 1 })).toBe(false);
    expect(validate.errors?.[0]).toMatchObject({ keyword: 'additionalProperties' });
  });

  it('compiles what is left in the background and reports a schema that does not compile', async () => {
    const validators = new DeferredValidators();
    validators.validator(bodyAjv, schema);
    const broken = validators.validator(bodyAjv, {
      type: 'object',
      properties: { a: { type: 'no-such-type' } },
    });
    const errors: unknown[] = [];
    validators.compileInBackground((error) => errors.push(error));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(errors).toHaveLength(1);
    // Its route answers with the error (a 500) rather than accepting anything unchecked.
    expect(() => broken({ a: 1 })).toThrow();
  });
});
