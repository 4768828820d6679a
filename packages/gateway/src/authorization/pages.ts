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
