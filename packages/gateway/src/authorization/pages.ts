import type { Branding } from './branding.js';

/**
 * The few HTML pages end users see: the landing page of a link, the form for an API key or a
 * password, the result of an authorization, or why a link or callback could not be used. Plain
 * HTML, no scripts; every interpolated value is escaped; the environment's branding (name, logo,
 * accent colour, support link) on each.
 */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface ResultPage {
  status: number;
  title: string;
  message: string;
  /** Machine-readable outcome, also in a data attribute for browser tests. */
  outcome: 'success' | 'error';
  code?: string;
  branding?: Branding;
}

const DEFAULT_ACCENT = '#1d4ed8';

function layout(
  title: string,
  body: string,
  branding: Branding | undefined,
  attributes: { outcome: string; code?: string | undefined; className?: string },
): string {
  const accent = branding?.accent_color ?? DEFAULT_ACCENT;
  const brand = branding?.display_name ?? branding?.logo_url;
  const header = brand
    ? `<header>${branding?.logo_url ? `<img src="${escapeHtml(branding.logo_url)}" alt="" height="48">` : ''}${branding?.display_name ? `<span>${escapeHtml(branding.display_name)}</span>` : ''}</header>`
    : '';
  const support = branding?.support_url
    ? `<footer>Need help? <a href="${escapeHtml(branding.support_url)}" rel="noopener noreferrer">Contact ${escapeHtml(branding.display_name ?? 'support')}</a></footer>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · ${escapeHtml(branding?.display_name ?? 'Portico')}</title>
<style>
  body { font-family: system-ui, sans-serif; background: #f6f7f9; color: #1d2330; display: grid; place-items: center; min-height: 100vh; margin: 0; }
  main { background: #fff; border-radius: 12px; padding: 2rem 2.5rem; max-width: 32rem; box-shadow: 0 2px 12px rgba(0,0,0,.08); }
  header { display: flex; align-items: center; gap: .75rem; margin-bottom: 1rem; font-weight: 600; }
  header img { max-height: 48px; max-width: 12rem; }
  h1 { font-size: 1.3rem; margin: 0 0 .75rem; color: ${accent}; }
  .success h1 { color: #1a7f37; } .error h1 { color: #b42318; }
  label { display: block; margin: 1rem 0 .3rem; font-weight: 600; }
  input { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; border: 1px solid #c9ccd3; border-radius: 6px; }
  button { margin-top: 1.25rem; padding: .55rem 1.2rem; font: inherit; border: 0; border-radius: 6px; background: ${accent}; color: #fff; cursor: pointer; }
  .alert { color: #b42318; } .hint { color: #596173; font-size: .9rem; }
  code { background: #f0f1f4; padding: .1rem .3rem; border-radius: 4px; }
  footer { margin-top: 1.5rem; font-size: .9rem; color: #596173; }
</style>
</head>
<body>
<main class="${attributes.className ?? attributes.outcome}" data-outcome="${attributes.outcome}"${attributes.code ? ` data-code="${escapeHtml(attributes.code)}"` : ''}>
${header}
${body}
${support}
</main>
</body>
</html>`;
}

/** Another HTML page in the same frame (an approver's decision page): `body` is trusted, escaped HTML. */
export function renderHtmlPage(title: string, body: string, outcome: string, code?: string): string {
  return layout(title, body, undefined, { outcome, code });
}

export function renderPage(page: ResultPage): string {
  return layout(
    page.title,
    `<h1 id="title">${escapeHtml(page.title)}</h1>
<p id="message">${escapeHtml(page.message)}</p>
${page.code ? `<p>Error code: <code>${escapeHtml(page.code)}</code></p>` : ''}`,
    page.branding,
    { outcome: page.outcome, code: page.code },
  );
}

/**
 * What a link shows before anything happens: who asks to connect which account, and the button
 * that starts the trip. Opening the link (GET, HEAD: what previewers and scanners do) spends
 * nothing; the button's POST does.
 */
export interface LandingPage {
  providerName: string;
  appName: string | null;
  /** Where the button posts: the link itself. */
  action: string;
  /** OAuth: the provider's consent screen comes next; otherwise Portico's form. */
  oauth: boolean;
  expiresAt: Date;
  branding?: Branding;
}

export function renderLanding(page: LandingPage): string {
  const app = page.branding?.display_name ?? page.appName ?? 'The application';
  const next = page.oauth
    ? `You will sign in at ${escapeHtml(page.providerName)} and choose what to allow.`
    : `You will enter your ${escapeHtml(page.providerName)} credentials on the next page.`;
  return layout(
    `Connect ${page.providerName}`,
    `<h1 id="title">Connect your ${escapeHtml(page.providerName)} account</h1>
<p id="message">${escapeHtml(app)} asks to act on your behalf in ${escapeHtml(page.providerName)}. ${next}</p>
<form method="post" action="${escapeHtml(page.action)}">
<button type="submit" id="continue">Continue to ${escapeHtml(page.providerName)}</button>
</form>
<p class="hint">This link works once and until ${escapeHtml(page.expiresAt.toUTCString())}.</p>`,
    page.branding,
    { outcome: 'landing' },
  );
}

/** The hosted form where an end user enters an API key, or a user name and password. */
export interface CredentialFormPage {
  status: number;
  providerName: string;
  /** Who asks (the connection's display name), when the operator named it. */
  appName: string | null;
  kind: 'api_key' | 'basic';
  labels: { key: string; username: string; password: string };
  help?: string;
  /** Where the form posts (the connection's callback) and the state that names this trip. */
  action: string;
  state: string;
  /** Why the last entry was refused. */
  error?: string;
  /** A sandbox connection: what its emulator accepts here. */
  sandboxHint?: string;
  branding?: Branding;
}

export function renderCredentialForm(form: CredentialFormPage): string {
  const field = (name: string, label: string, type: string) =>
    `<label for="${name}">${escapeHtml(label)}</label>
<input id="${name}" name="${name}" type="${type}" required autocomplete="off" spellcheck="false">`;
  const fields =
    form.kind === 'basic'
      ? `${field('username', form.labels.username, 'text')}\n${field('password', form.labels.password, 'password')}`
      : field('api_key', form.labels.key, 'password');
  const app = form.branding?.display_name ?? form.appName ?? 'The application';
  return layout(
    `Connect ${form.providerName}`,
    `<h1 id="title">Connect your ${escapeHtml(form.providerName)} account</h1>
<p>${escapeHtml(app)} will act on your behalf in ${escapeHtml(form.providerName)} with what you enter here. It is stored encrypted and never shown to the application.</p>
${form.help ? `<p class="hint">${escapeHtml(form.help)}</p>` : ''}
${form.sandboxHint ? `<p class="hint" id="sandbox-hint">${escapeHtml(form.sandboxHint)}</p>` : ''}
${form.error ? `<p class="alert" id="message" role="alert">${escapeHtml(form.error)}</p>` : ''}
<form method="post" action="${escapeHtml(form.action)}">
<input type="hidden" name="state" value="${escapeHtml(form.state)}">
${fields}
<button type="submit">Connect</button>
</form>`,
    form.branding,
    { outcome: 'form', ...(form.error ? { code: 'credentials_invalid' } : {}) },
  );
}

/** A user-facing failure of the hosted flow: shown as a page, or sent to the app's redirect_url. */
export class FlowError extends Error {
  /** The environment's look, when the failure is known to belong to one. */
  branding?: Branding;

  constructor(
    readonly code: string,
    readonly title: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = 'FlowError';
  }
}
