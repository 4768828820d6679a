import type { EmulatedUser } from './types.js';

export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/**
 * Headers of every HTML page the emulators serve (plugin.ts adds them). No site may frame a page: the
 * consent page's Allow button inside another site's iframe would be clickjacking. The policy lets
 * the inline stylesheet apply and nothing load or run; form-action stays open because the consent
 * form's answer redirects to the client's redirect URI on another origin, and browsers check
 * form-action against redirects too. No Referer: the authorize URL carries the client's state.
 */
export const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

const STYLE = `body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.3rem}code{background:#f3f3f3;padding:0 .25rem}fieldset{border:1px solid #ccc;margin:1rem 0}
label{display:block;margin:.3rem 0}button{font-size:1rem;padding:.4rem 1rem;margin-right:.5rem}
.note{color:#666;font-size:.85rem}`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>
${body}
</body>
</html>
`;
}

export interface ConsentPageInput {
  providerName: string;
  clientId: string;
  scopes: string[];
  users: EmulatedUser[];
  selectedUserId?: string;
  /** Form target: the authorize path as the browser reached it. */
  action: string;
  /** Every authorize parameter, carried to the POST unchanged. */
  params: Record<string, string>;
}

/** The consent screen: a plain HTML form so a headless browser or an HTTP test can submit it. */
export function renderConsentPage(input: ConsentPageInput): string {
  const selected = input.selectedUserId ?? input.users[0]?.id;
  const users = input.users
    .map(
      (u) =>
        `<label><input type="radio" name="user_id" value="${escapeHtml(u.id)}"${u.id === selected ? ' checked' : ''}> ` +
        `${escapeHtml(u.name)} &lt;${escapeHtml(u.email)}&gt;</label>`,
    )
    .join('\n');
  const scopes = input.scopes.length
    ? `<ul id="scopes">${input.scopes.map((s) => `<li><code>${escapeHtml(s)}</code></li>`).join('')}</ul>`
    : '<p id="scopes">No specific permissions requested.</p>';
  const hidden = Object.entries(input.params)
    .filter(([name]) => name !== 'user_id' && name !== 'decision')
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  return page(
    `Authorize access — ${input.providerName} emulator`,
    `<h1>${escapeHtml(input.providerName)} (emulated): authorize access</h1>
<p>The application <code id="client-id">${escapeHtml(input.clientId)}</code> asks for access to your account.</p>
${scopes}
<form method="post" action="${escapeHtml(input.action)}">
${hidden}
<fieldset><legend>Sign in as</legend>
${users}
</fieldset>
<button type="submit" name="decision" value="allow" id="allow">Allow</button>
<button type="submit" name="decision" value="deny" id="deny">Deny</button>
</form>
<p class="note">This is an emulator of the provider's OAuth consent screen; no real account is involved.</p>`,
  );
}

/** Shown instead of redirecting when the client or redirect URI cannot be trusted (RFC 6749 §4.1.2.1). */
export function renderErrorPage(providerName: string, error: string, description: string): string {
  return page(
    `Authorization error — ${providerName} emulator`,
    `<h1>${escapeHtml(providerName)} (emulated): authorization error</h1>
<p id="error"><strong>${escapeHtml(error)}</strong></p>
<p id="error-description">${escapeHtml(description)}</p>`,
  );
}
