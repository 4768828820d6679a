import type { PorticoError } from '../errors/errors.js';
import { type AuthorizationSubject, authorizationRequired, authorizationText } from './authorization.js';

/** What the SDK knows about a failed call beyond its problem: for whom, which tool, which account. */
export interface ProblemContext extends AuthorizationSubject {
  identifier?: string;
  toolName?: string;
}

/**
 * The text a model reads when its tool call failed: the problem's detail (written to say what to
 * change) and the fields at fault. When the user must connect an account first, the link leads:
 * what to tell the user, then the link on its own line.
 */
export function problemText(error: PorticoError, context: ProblemContext = {}): string {
  const authorization = authorizationRequired(error, context);
  if (authorization) return authorizationText(authorization, context);
  const lines = [error.detail];
  for (const field of error.errors) lines.push(`- ${field.path}: ${field.message}`);
  return lines.join('\n');
}

/** The text a model reads when its tool call succeeded. */
export function dataText(data: unknown): string {
  return JSON.stringify(data);
}
