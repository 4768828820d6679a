import { api } from '../api.js';
import { confirmDialog } from '../dialogs.js';
import { copy, h, toast } from '../dom.js';
import { clearProblem, field, formError, formOk, showProblem } from '../forms.js';
import { fill, page } from '../layout.js';

const BRANDING_FIELDS = ['display_name', 'logo_url', 'accent_color', 'support_url'];
/** What the pages end users see use when the branding names no accent colour. */
const DEFAULT_ACCENT = '#1d4ed8';
const HEX_COLOUR = /^#[0-9a-fA-F]{6}$/;

/** WCAG contrast ratio of white text on `hex` (#rrggbb). */
function contrastWithWhite(hex) {
  const channel = (i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  return 1.05 / (luminance + 0.05);
}

/**
 * The environment's look on the pages end users see: four fields, a live preview of the link's
 * landing page, and "Remove branding" (PATCH with `branding: {}`).
 */
function brandingForm(env) {
  let stored = env.branding ?? {};
  const inputs = {
    display_name: h('input', {
      id: 'branding-display_name',
      name: 'branding.display_name',
      maxlength: 80,
      autocomplete: 'off',
      placeholder: 'e.g. Acme',
    }),
    logo_url: h('input', {
      id: 'branding-logo_url',
      name: 'branding.logo_url',
      type: 'url',
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: 'https://cdn.example.com/logo.png',
    }),
    accent_color: h('input', {
      id: 'branding-accent_color',
      name: 'branding.accent_color',
      maxlength: 7,
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: DEFAULT_ACCENT,
      class: 'colour-text',
    }),
    support_url: h('input', {
      id: 'branding-support_url',
      name: 'branding.support_url',
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: 'https://help.example.com or mailto:help@example.com',
    }),
  };
  const picker = h('input', {
    type: 'color',
    id: 'branding-accent-picker',
    'aria-label': 'Accent colour picker',
    value: DEFAULT_ACCENT,
  });
  const accentField = field(
    'Accent colour',
    inputs.accent_color,
    `#rrggbb, for the heading and the button; empty is Portico’s blue (${DEFAULT_ACCENT}).`,
  );
  // The picker beside the text field, which stays the field (label, hint, error) the server names.
  const colourRow = h('div', { class: 'colour-row' });
  inputs.accent_color.replaceWith(colourRow);
  colourRow.append(picker, inputs.accent_color);

  // The preview: the landing page's header, heading, message, button and support footer.
  const previewLogo = h('span', { class: 'preview-logo', id: 'preview-logo' }, 'Logo');
  const previewName = h('span', { id: 'preview-name' });
  const previewHeader = h('div', { class: 'preview-header' }, previewLogo, previewName);
  const previewMessage = h('p', { id: 'preview-message' });
  const previewSupport = h('p', { class: 'preview-footer', id: 'preview-support' });
  const preview = h(
    'div',
    { class: 'brand-preview', id: 'branding-preview' },
    previewHeader,
    h('p', { class: 'preview-title', id: 'preview-title' }, 'Connect your Notion account'),
    previewMessage,
    h('span', { class: 'preview-button', id: 'preview-button' }, 'Continue to Notion'),
    previewSupport,
  );
  const contrast = h('p', { class: 'hint', id: 'accent-contrast', 'aria-live': 'polite' });
  const renderPreview = () => {
    const value = (name) => inputs[name].value.trim();
    const name = value('display_name');
    const logo = value('logo_url');
    const accent = HEX_COLOUR.test(value('accent_color')) ? value('accent_color') : DEFAULT_ACCENT;
    // A CSS custom property through the CSSOM: allowed under the strict style-src.
    preview.style.setProperty('--preview-accent', accent);
    previewHeader.hidden = !name && !logo;
    previewLogo.hidden = !logo;
    let host = '';
    try {
      host = new URL(logo).host;
    } catch {}
    previewLogo.title = host ? `Logo from ${host}` : '';
    previewName.textContent = name;
    previewMessage.textContent = `${name || 'The application'} asks to act on your behalf in Notion. You will sign in at Notion and choose what to allow.`;
    previewSupport.hidden = !value('support_url');
    previewSupport.textContent = `Need help? Contact ${name || 'support'}`;
    const typed = value('accent_color');
    const ratio = contrastWithWhite(accent);
    contrast.textContent =
      typed && !HEX_COLOUR.test(typed)
        ? `“${typed}” is not a #rrggbb colour: the preview shows the default.`
        : ratio < 4.5
          ? `White button text on ${accent} has a contrast of ${ratio.toFixed(1)}:1, below the 4.5:1 that keeps it readable; a darker colour is easier to read.`
          : `White button text on ${accent}: contrast ${ratio.toFixed(1)}:1.`;
  };
  const load = (branding) => {
    stored = branding ?? {};
    for (const name of BRANDING_FIELDS) inputs[name].value = stored[name] ?? '';
    if (HEX_COLOUR.test(inputs.accent_color.value)) picker.value = inputs.accent_color.value.toLowerCase();
    else picker.value = DEFAULT_ACCENT;
    remove.disabled = Object.keys(stored).length === 0;
    renderPreview();
  };
  picker.addEventListener('input', () => {
    inputs.accent_color.value = picker.value;
    renderPreview();
  });
  inputs.accent_color.addEventListener('input', () => {
    const typed = inputs.accent_color.value.trim();
    if (HEX_COLOUR.test(typed)) picker.value = typed.toLowerCase();
  });
  for (const input of Object.values(inputs)) input.addEventListener('input', renderPreview);

  const ok = formOk('branding-saved');
  const remove = h('button', { type: 'button', class: 'danger', id: 'remove-branding' }, 'Remove branding');
  const form = h(
    'form',
    { class: 'card', id: 'branding-form', novalidate: true, 'data-edit': true },
    h('h2', {}, 'Branding'),
    h(
      'p',
      { class: 'hint' },
      'Your application’s name and look on the pages end users see: an authorization link’s landing page, the API-key form, and the result and error pages.',
    ),
    h(
      'div',
      { class: 'settings-split' },
      h(
        'div',
        {},
        field(
          'Display name',
          inputs.display_name,
          'Up to 80 characters; it replaces a connection’s display name on those pages.',
        ),
        field('Logo URL', inputs.logo_url, 'An https image, shown at most 48 px high.'),
        accentField,
        field('Support link', inputs.support_url, 'An http(s) or mailto: URL, shown as “Need help?”.'),
      ),
      h(
        'figure',
        { class: 'preview-figure' },
        preview,
        h(
          'figcaption',
          { class: 'hint' },
          'Preview of a link’s landing page. The logo is only marked here: the dashboard loads no images from other sites.',
        ),
        contrast,
      ),
    ),
    formError(),
    ok,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save branding'), remove),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    ok.textContent = '';
    const branding = {};
    for (const name of BRANDING_FIELDS) {
      const value = inputs[name].value.trim();
      if (value) branding[name] = value;
    }
    try {
      const saved = await api('/environment', { method: 'PATCH', body: { branding } });
      load(saved.branding);
      const removed = Object.keys(saved.branding ?? {}).length === 0;
      ok.textContent = removed
        ? 'No branding is set: end users see Portico’s plain pages.'
        : 'Branding saved: the pages end users open from now on show it.';
      toast(removed ? 'Branding removed' : 'Branding saved');
    } catch (error) {
      showProblem(form, error);
    }
  });
  remove.addEventListener('click', async () => {
    const sure = await confirmDialog(
      'Remove the branding?',
      'End users see Portico’s plain pages again: no name, logo, colour or support link.',
      'Remove branding',
    );
    if (!sure) return;
    clearProblem(form);
    ok.textContent = '';
    try {
      const saved = await api('/environment', { method: 'PATCH', body: { branding: {} } });
      load(saved.branding);
      ok.textContent = 'Branding removed: end users see Portico’s plain pages.';
      toast('Branding removed');
    } catch (error) {
      showProblem(form, error);
    }
  });
  load(stored);
  return form;
}

/** The lines of a text area that hold entries, with their line numbers (from 1). */
function entryLines(text) {
  return text
    .split('\n')
    .map((line, i) => ({ value: line.trim(), line: i + 1 }))
    .filter((x) => x.value);
}

/**
 * The environment's own redirect URL allow-list, one entry per line, beside the operator's global
 * one (PORTICO_REDIRECT_URL_ALLOWLIST), which is shown read-only.
 */
function allowlistForm(env) {
  const text = h('textarea', {
    id: 'redirect-allowlist',
    name: 'redirect_url_allowlist',
    rows: 6,
    spellcheck: 'false',
    autocomplete: 'off',
    placeholder: 'https://app.example.com\nhttps://app.example.com/oauth/',
  });
  const global = h('div', { id: 'global-allowlist' });
  const effect = h('p', { class: 'hint', id: 'allowlist-effect' });
  const render = (view) => {
    text.value = view.redirect_url_allowlist.join('\n');
    fill(
      global,
      view.global_redirect_url_allowlist.length
        ? h(
            'ul',
            { class: 'plain-list' },
            view.global_redirect_url_allowlist.map((entry) => h('li', {}, h('code', {}, entry))),
          )
        : h('p', { class: 'hint' }, 'None: PORTICO_REDIRECT_URL_ALLOWLIST is not set.'),
    );
    const total = view.global_redirect_url_allowlist.length + view.redirect_url_allowlist.length;
    effect.textContent = total
      ? `Links may send the browser (redirect_url, user_verify_url) only to URLs under ${total === 1 ? 'this entry' : `these ${total} entries`}.`
      : 'Neither list has entries: links may send the browser to any http(s) URL.';
  };
  const ok = formOk('allowlist-saved');
  const form = h(
    'form',
    { class: 'card', id: 'allowlist-form', novalidate: true, 'data-edit': true },
    h('h2', {}, 'Redirect URL allow-list'),
    h(
      'p',
      { class: 'hint' },
      'Where this environment’s authorization links may send the browser when they are done. Once either list has entries, a link whose redirect_url is not under one of them is refused.',
    ),
    field(
      'This environment’s entries',
      text,
      'One per line: an origin (https://app.example.com) or a URL prefix (https://app.example.com/oauth/); at most 50. Empty removes them all.',
    ),
    h('h3', {}, 'Global entries (every environment)'),
    h('p', { class: 'hint' }, 'Set by the operator in PORTICO_REDIRECT_URL_ALLOWLIST; read-only here.'),
    global,
    effect,
    formError(),
    ok,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save allow-list')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    ok.textContent = '';
    const lines = entryLines(text.value);
    try {
      const saved = await api('/environment', {
        method: 'PATCH',
        body: { redirect_url_allowlist: lines.map((x) => x.value) },
      });
      const changed = saved.redirect_url_allowlist.join('\n') !== lines.map((x) => x.value).join('\n');
      render(saved);
      const n = saved.redirect_url_allowlist.length;
      ok.textContent = n
        ? `Allow-list saved: ${n} entr${n === 1 ? 'y' : 'ies'}${changed ? ', as Portico stores them (normalized, without duplicates)' : ''}.`
        : 'Allow-list saved: this environment has no entries of its own.';
      toast('Allow-list saved');
    } catch (error) {
      // An entry's error names its index; the text area shows lines, so name the line and entry.
      const problem = error.problem;
      if (problem?.errors)
        problem.errors = problem.errors.map((e) => {
          const index = /^\/redirect_url_allowlist\/(\d+)$/.exec(e.path ?? '')?.[1];
          const entry = index === undefined ? undefined : lines[Number(index)];
          return entry ? { ...e, message: `line ${entry.line} (${entry.value}): ${e.message}` } : e;
        });
      showProblem(form, error);
    }
  });
  render(env);
  return form;
}

/**
 * OAuth for MCP clients (GET/PUT /mcp/oauth/settings): the application's sign-in URL, where
 * Portico's authorization endpoint sends the browser; none turns MCP OAuth off.
 */
function mcpOAuthForm(initial) {
  const url = h('input', {
    id: 'mcp-sign-in-url',
    name: 'sign_in_url',
    type: 'url',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'https://app.example.com/mcp/sign-in',
  });
  const state = h('div', { id: 'mcp-oauth-state', 'aria-live': 'polite' });
  const ok = formOk('mcp-oauth-saved');
  const off = h('button', { type: 'button', class: 'danger', id: 'mcp-oauth-off' }, 'Turn off MCP OAuth');
  const render = (settings) => {
    url.value = settings.sign_in_url ?? '';
    off.disabled = !settings.sign_in_url;
    fill(
      state,
      settings.sign_in_url && settings.mcp_url
        ? [
            h('p', {}, h('span', { class: 'badge s-active' }, 'ON'), ' MCP clients connect with OAuth at:'),
            h(
              'div',
              { class: 'copy-row' },
              h('code', { id: 'mcp-url' }, settings.mcp_url),
              h(
                'button',
                { type: 'button', class: 'secondary', onclick: () => copy(settings.mcp_url, 'MCP URL') },
                'Copy MCP URL',
              ),
            ),
          ]
        : h(
            'p',
            {},
            h('span', { class: 'badge s-disconnected' }, 'OFF'),
            ' MCP clients of this environment connect only with MCP tokens.',
          ),
    );
  };
  const save = async (sign_in_url, done) => {
    clearProblem(form);
    ok.textContent = '';
    try {
      const saved = await api('/mcp/oauth/settings', { method: 'PUT', body: { sign_in_url } });
      render(saved);
      ok.textContent = done(saved);
      toast(saved.sign_in_url ? 'MCP OAuth sign-in URL saved' : 'MCP OAuth turned off');
    } catch (error) {
      showProblem(form, error);
    }
  };
  const form = h(
    'form',
    { class: 'card', id: 'mcp-oauth-form', novalidate: true, 'data-edit': true },
    h('h2', {}, 'MCP clients with OAuth'),
    h(
      'p',
      { class: 'hint' },
      'MCP clients can connect to Portico’s MCP server with OAuth instead of an MCP token. Portico sends the browser to your application’s sign-in URL with mcp_auth_request_id, client_name and redirect_host; your application signs its user in and approves the request (POST /api/v1/mcp/oauth/approve).',
    ),
    state,
    field('Sign-in URL', url, 'An absolute http(s) URL without a fragment. Empty turns MCP OAuth off.'),
    formError(),
    ok,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save sign-in URL'), off),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = url.value.trim();
    void save(value || null, (saved) =>
      saved.sign_in_url
        ? 'Sign-in URL saved: MCP clients can connect with OAuth.'
        : 'MCP OAuth is off for this environment.',
    );
  });
  off.addEventListener('click', async () => {
    const sure = await confirmDialog(
      'Turn off MCP OAuth?',
      'MCP clients can no longer start an OAuth sign-in for this environment; those that use MCP tokens are not affected.',
      'Turn off',
    );
    if (sure) void save(null, () => 'MCP OAuth is off for this environment.');
  });
  render(initial);
  return form;
}

export async function settingsPage() {
  const [env, mcpOAuth] = await Promise.all([
    api('/environment'),
    // A gateway without MCP OAuth (an older one) has no such route: the section is left out.
    api('/mcp/oauth/settings').catch((error) => {
      if (error.problem?.status === 404) return null;
      throw error;
    }),
  ]);
  page(
    'Settings',
    h(
      'p',
      { class: 'hint intro', id: 'environment-name' },
      'Environment ',
      h('strong', {}, env.name),
      ' (',
      h('code', {}, env.id),
      ').',
    ),
    brandingForm(env),
    allowlistForm(env),
    mcpOAuth ? mcpOAuthForm(mcpOAuth) : null,
  );
}

export const nav = { path: '/settings', label: 'Settings' };

export const routes = [[/^\/settings$/, settingsPage]];
