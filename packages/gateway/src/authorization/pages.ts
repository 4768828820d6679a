/**
 * The few HTML pages end users see: the result of an authorization, or why a link or callback
 * could not be used. Plain HTML, no scripts; every interpolated value is escaped.
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
}

export function renderPage(page: ResultPage): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(page.title)} · Portico</title>
<style>
  body { font-family: system-ui, sans-serif; background: #f6f7f9; color: #1d2330; display: grid; place-items: center; min-height: 100vh; margin: 0; }
  main { background: #fff; border-radius: 12px; padding: 2rem 2.5rem; max-width: 32rem; box-shadow: 0 2px 12px rgba(0,0,0,.08); }
  h1 { font-size: 1.3rem; margin: 0 0 .75rem; }
  .success h1 { color: #1a7f37; } .error h1 { color: #b42318; }
  code { background: #f0f1f4; padding: .1rem .3rem; border-radius: 4px; }
</style>
</head>
<body>
<main class="${page.outcome}" data-outcome="${page.outcome}"${page.code ? ` data-code="${escapeHtml(page.code)}"` : ''}>
<h1 id="title">${escapeHtml(page.title)}</h1>
<p id="message">${escapeHtml(page.message)}</p>
${page.code ? `<p>Error code: <code>${escapeHtml(page.code)}</code></p>` : ''}
</main>
</body>
</html>`;
}

/** A user-facing failure of the hosted flow: shown as a page, or sent to the app's redirect_url. */
export class FlowError extends Error {
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
  /** A sandbox connection: the emulator accepts any value beginning sandbox_. */
  sandbox: boolean;
}

export function renderCredentialForm(form: CredentialFormPage): string {
  const field = (name: string, label: string, type: string) =>
    `<label for="${name}">${escapeHtml(label)}</label>
<input id="${name}" name="${name}" type="${type}" required autocomplete="off" spellcheck="false">`;
  const fields =
    form.kind === 'basic'
      ? `${field('username', form.labels.username, 'text')}\n${field('password', form.labels.password, 'password')}`
      : field('api_key', form.labels.key, 'password');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Connect ${escapeHtml(form.providerName)} · Portico</title>
<style>
  body { font-family: system-ui, sans-serif; background: #f6f7f9; color: #1d2330; display: grid; place-items: center; min-height: 100vh; margin: 0; }
  main { background: #fff; border-radius: 12px; padding: 2rem 2.5rem; max-width: 32rem; box-shadow: 0 2px 12px rgba(0,0,0,.08); }
  h1 { font-size: 1.3rem; margin: 0 0 .75rem; }
  label { display: block; margin: 1rem 0 .3rem; font-weight: 600; }
  input { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; border: 1px solid #c9ccd3; border-radius: 6px; }
  button { margin-top: 1.25rem; padding: .55rem 1.2rem; font: inherit; border: 0; border-radius: 6px; background: #1d4ed8; color: #fff; }
  .error { color: #b42318; } .hint { color: #596173; font-size: .9rem; }
</style>
</head>
<body>
<main data-outcome="form"${form.error ? ' data-code="credentials_invalid"' : ''}>
<h1 id="title">Connect your ${escapeHtml(form.providerName)} account</h1>
<p>${escapeHtml(form.appName ?? 'The application')} will act on your behalf in ${escapeHtml(form.providerName)} with what you enter here. It is stored encrypted and never shown to the application.</p>
${form.help ? `<p class="hint">${escapeHtml(form.help)}</p>` : ''}
${form.sandbox ? '<p class="hint">Sandbox: any value beginning <code>sandbox_</code> is accepted.</p>' : ''}
${form.error ? `<p class="error" id="message" role="alert">${escapeHtml(form.error)}</p>` : ''}
<form method="post" action="${escapeHtml(form.action)}">
<input type="hidden" name="state" value="${escapeHtml(form.state)}">
${fields}
<button type="submit">Connect</button>
</form>
</main>
</body>
</html>`;
}
