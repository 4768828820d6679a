import { api } from '../api.js';
import { confirmDialog } from '../dialogs.js';
import { h, toast, when } from '../dom.js';
import { clearProblem, field, formError, showProblem } from '../forms.js';
import { copyButton, dash, page, write } from '../layout.js';
import { table } from '../tables.js';

/** Splits a comma- or space-separated list; undefined when empty (the API's "all"). */
const listOf = (text) => {
  const items = text
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);
  return items.length ? items : undefined;
};

const seconds = (text) => (/^\d+$/.test(text.trim()) ? Number(text.trim()) : text.trim() || undefined);

function minted(out, token, what) {
  out.replaceChildren(
    h(
      'div',
      { class: 'notice' },
      h('p', {}, h('strong', {}, `${what}: store the token now, it is shown only once.`)),
      h('p', {}, h('code', { class: 'secret-once' }, token)),
      copyButton(token, 'Token'),
    ),
  );
}

function revokeButton(kind, t, refresh) {
  return write(
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        onclick: async () => {
          const ok = await confirmDialog(
            `Revoke this ${kind} token of ${t.identifier}?`,
            'Clients that use it are refused at once.',
            'Revoke',
          );
          if (!ok) return;
          try {
            await api(`/${kind === 'MCP' ? 'mcp' : 'proxy'}/tokens/${encodeURIComponent(t.id)}`, {
              method: 'DELETE',
            });
            toast('Token revoked');
            await refresh();
          } catch (error) {
            toast(error.message);
          }
        },
      },
      'Revoke',
    ),
  );
}

function mcpSection(connections) {
  const identifier = h('input', { id: 'mcp-identifier', name: 'identifier', autocomplete: 'off' });
  const conns = h('input', {
    id: 'mcp-connections',
    name: 'connection_names',
    autocomplete: 'off',
    placeholder: connections.slice(0, 2).join(', ') || 'all',
  });
  const tools = h('input', { id: 'mcp-tools', name: 'tools', autocomplete: 'off', placeholder: 'all' });
  const expires = h('input', { id: 'mcp-expires', name: 'expires_in', inputmode: 'numeric' });
  const out = h('div', { 'aria-live': 'polite', id: 'mcp-token-created' });
  const rows = h('div', { id: 'mcp-tokens-table' });
  const refresh = async () => {
    const list = await api('/mcp/tokens', { query: { page_size: 100 } });
    rows.replaceChildren(
      table(
        ['Identifier', 'Connections', 'Tools', 'Expires', 'Last used', ''],
        list.data.map((t) =>
          h(
            'tr',
            {},
            h('td', {}, t.identifier),
            h('td', {}, t.connection_names?.join(', ') ?? 'all'),
            h('td', {}, t.tools?.join(', ') ?? 'all'),
            h('td', {}, when(t.expires_at)),
            h('td', {}, when(t.last_used_at)),
            h('td', {}, revokeButton('MCP', t, refresh)),
          ),
        ),
        'MCP tokens',
      ),
    );
  };
  const form = h(
    'form',
    { class: 'card', id: 'mcp-token-form', novalidate: true },
    h('h3', {}, 'Mint an MCP token'),
    h(
      'div',
      { class: 'row wrap' },
      field('Identifier', identifier, 'The end user the token acts for.'),
      field('Connections', conns, 'Comma-separated; empty for all.'),
      field('Tools', tools, 'Comma-separated; empty for all.'),
      field('Expires in (seconds)', expires, 'Default 30 days.'),
    ),
    formError(),
    h('button', { type: 'submit' }, 'Mint MCP token'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    const body = {
      identifier: identifier.value.trim(),
      connection_names: listOf(conns.value),
      tools: listOf(tools.value),
      expires_in: seconds(expires.value),
    };
    try {
      const t = await api('/mcp/tokens', { method: 'POST', body });
      minted(out, t.token, 'MCP token minted');
      await refresh();
    } catch (error) {
      showProblem(form, error);
    }
  });
  return {
    refresh,
    el: h(
      'section',
      { class: 'card', 'aria-labelledby': 'mcp-tokens-title' },
      h('h2', { id: 'mcp-tokens-title' }, 'MCP tokens'),
      h('p', { class: 'hint' }, 'Per-user bearer tokens for MCP clients of Portico’s MCP server.'),
      write(form),
      out,
      rows,
    ),
  };
}

function proxySection(connections) {
  const conn = h(
    'select',
    { id: 'proxy-connection', name: 'connection_name' },
    connections.map((c) => h('option', { value: c }, c)),
  );
  const identifier = h('input', { id: 'proxy-identifier', name: 'identifier', autocomplete: 'off' });
  const expires = h('input', { id: 'proxy-expires', name: 'expires_in', inputmode: 'numeric' });
  const out = h('div', { 'aria-live': 'polite', id: 'proxy-token-created' });
  const rows = h('div', { id: 'proxy-tokens-table' });
  const refresh = async () => {
    const list = await api('/proxy/tokens', { query: { page_size: 100 } });
    rows.replaceChildren(
      table(
        ['Identifier', 'Connection', 'Expires', 'Last used', ''],
        list.data.map((t) =>
          h(
            'tr',
            {},
            h('td', {}, t.identifier),
            h('td', {}, dash(t.connection_name)),
            h('td', {}, when(t.expires_at)),
            h('td', {}, when(t.last_used_at)),
            h('td', {}, revokeButton('proxy', t, refresh)),
          ),
        ),
        'Proxy tokens',
      ),
    );
  };
  const form = h(
    'form',
    { class: 'card', id: 'proxy-token-form', novalidate: true },
    h('h3', {}, 'Mint a proxy token'),
    h(
      'div',
      { class: 'row wrap' },
      field('Connection', conn),
      field('Identifier', identifier, 'The end user whose account it reaches.'),
      field('Expires in (seconds)', expires, 'Default 30 days.'),
    ),
    formError(),
    h('button', { type: 'submit' }, 'Mint proxy token'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearProblem(form);
    try {
      const t = await api('/proxy/tokens', {
        method: 'POST',
        body: {
          connection_name: conn.value,
          identifier: identifier.value.trim(),
          expires_in: seconds(expires.value),
        },
      });
      minted(out, t.token, 'Proxy token minted');
      await refresh();
    } catch (error) {
      showProblem(form, error);
    }
  });
  return {
    refresh,
    el: h(
      'section',
      { class: 'card', 'aria-labelledby': 'proxy-tokens-title' },
      h('h2', { id: 'proxy-tokens-title' }, 'Proxy tokens'),
      h(
        'p',
        { class: 'hint' },
        'Each reaches one end user’s account on one connection through the proxy, with no routing headers.',
      ),
      connections.length ? write(form) : h('p', {}, 'Create a connection first.'),
      out,
      rows,
    ),
  };
}

export async function tokensPage() {
  const connections = (await api('/connections', { query: { page_size: 100 } })).data.map((c) => c.name);
  const mcp = mcpSection(connections);
  const proxy = proxySection(connections);
  await Promise.all([mcp.refresh(), proxy.refresh()]);
  page('Tokens', mcp.el, proxy.el);
}

export const nav = { path: '/tokens', label: 'Tokens' };

export const routes = [[/^\/tokens$/, tokensPage]];
