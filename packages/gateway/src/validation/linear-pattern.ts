import { RE2JS } from 're2js';

/**
 * Patterns a definition declares (an API key's format, a connection parameter's) run on RE2's
 * engine, in time linear in the text: JavaScript's backtracking RegExp takes exponential time on
 * patterns such as `^(a+)+$`, and a definition is a caller's word. RE2 has no backreferences or
 * lookaround; a pattern that needs them is refused when the definition is saved.
 *
 * Linear is not free: the cost is the text's length times the compiled program's size, so both
 * are bounded (a 500-instruction program over 4,096 characters takes milliseconds).
 */
export const PATTERN_MAX_LENGTH = 500;
/** Instructions of the compiled program (`[\s\S]{1000}` compiles to about 1,000). */
export const PATTERN_MAX_PROGRAM = 500;
/** The longest text a pattern is tested against; longer text does not match. */
export const PATTERN_MAX_INPUT = 4096;

const compiled = new Map<string, RE2JS>();
const CACHE_SIZE = 500;

/** Why a pattern cannot be used, or undefined when it can. */
export function patternFault(source: string): string | undefined {
  if (source.length > PATTERN_MAX_LENGTH)
    return `is ${source.length} characters long; a pattern may have at most ${PATTERN_MAX_LENGTH}`;
  let pattern: RE2JS;
  try {
    pattern = RE2JS.compile(source);
  } catch (error) {
    return `is not a regular expression Portico runs (RE2 syntax, linear time: no backreferences or lookaround): ${(error as Error).message}`;
  }
  if (pattern.programSize() > PATTERN_MAX_PROGRAM)
    return `is too large once compiled (${pattern.programSize()} instructions, at most ${PATTERN_MAX_PROGRAM}); use smaller repeat counts`;
  return undefined;
}

/**
 * Whether `text` contains a match of `source` (as RegExp.prototype.test), in linear time. Text
 * longer than PATTERN_MAX_INPUT never matches, checked before anything runs. The pattern must
 * have passed `patternFault` (a definition is checked when saved).
 */
export function testPattern(source: string, text: string): boolean {
  if (text.length > PATTERN_MAX_INPUT) return false;
  let pattern = compiled.get(source);
  if (!pattern) {
    pattern = RE2JS.compile(source);
    if (compiled.size >= CACHE_SIZE) compiled.clear();
    compiled.set(source, pattern);
  }
  return pattern.test(text);
}
