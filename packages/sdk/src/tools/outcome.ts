import type { PorticoError } from '../errors/errors.js';

/**
 * The text a model reads when its tool call failed: the problem's detail (written to say what to
 * change), the fields at fault, and the link the user must open when an account is not active.
 */
export function problemText(error: PorticoError): string {
  const lines = [error.detail];
  for (const field of error.errors) lines.push(`- ${field.path}: ${field.message}`);
  if (error.authorizationLink) lines.push(`Authorization link for the user: ${error.authorizationLink.link}`);
  return lines.join('\n');
}

/** The text a model reads when its tool call succeeded. */
export function dataText(data: unknown): string {
  return JSON.stringify(data);
}
