import type { ProviderDefinition } from './types.js';

/**
 * The documentation pages generated from provider definitions: one per provider
 * (docs/providers/{key}.md), an index, and the definition format field by field from the schema.
 * `npm run docs:providers` writes them; a test fails when a file differs from what this makes.
 */

const REDIRECT_URI = '`https://<your Portico>/sso/v1/oauth/<connection id>/callback`';

const AUTH_NAMES = {
  oauth2: 'OAuth 2.0 authorization code',
  api_key: 'API key (entered by the end user)',
  basic: 'HTTP Basic (user name and password entered by the end user)',
} as const;

function table(head: string[], rows: string[][]): string {
  const cell = (v: string) => v.replaceAll('|', '\\|').replaceAll('\n', ' ');
  return [
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

const code = (v: string) => `\`${v}\``;

const REGISTRATION_NAMES = {
  client_id_metadata_document: 'client ID metadata document',
  dynamic: 'dynamic client registration (RFC 7591)',
  pre_registered: 'a client the operator registers at the vendor',
} as const;

/** A remote MCP server's page: where it is, how Portico registers there, what its tools are called. */
function mcpServerPage(p: ProviderDefinition, mcp: NonNullable<ProviderDefinition['mcp']>): string {
  const checked = (p.source.mcp as { checked?: string } | undefined)?.checked;
  const preRegistered = mcp.registration.length === 1 && mcp.registration[0] === 'pre_registered';
  const body: Record<string, unknown> = { name: p.key.replaceAll('_', '-'), provider: p.key };
  if (preRegistered) Object.assign(body, { client_id: '…', client_secret: '…' });
  return [
    `# ${p.displayName}`,
    '',
    `<!-- Generated from packages/gateway/providers/${p.key}.json by npm run docs:providers; do not edit. -->`,
    '',
    table(
      ['Key', 'Category', 'Authentication', 'Checked against'],
      [
        [
          code(p.key),
          p.kind,
          'Remote MCP server: OAuth 2.1 per end user, discovered',
          p.docsUrl ? `[${p.docsUrl}](${p.docsUrl})` : '—',
        ],
      ],
    ),
    '',
    table(
      ['MCP server', 'Transport', 'Client registration'],
      [
        [
          code(mcp.url),
          mcp.transport === 'sse' ? 'HTTP+SSE (older)' : 'Streamable HTTP',
          mcp.registration.map((r) => REGISTRATION_NAMES[r]).join(', '),
        ],
      ],
    ),
    '',
    ...(checked ? [`What was checked: ${checked}`, ''] : []),
    '## Register at the provider',
    '',
    ...p.setup.steps.map((step, i) => `${i + 1}. ${step.replaceAll('{redirect_uri}', 'the redirect URI')}`),
    '',
    `The redirect URI is ${REDIRECT_URI}: Portico registers it itself with dynamic registration; a client you register needs it added once the connection exists.`,
    '',
    '## Create a connection',
    '',
    '```bash',
    `curl -s localhost:8080/api/v1/connections -H "Authorization: Bearer $TOKEN" \\`,
    `  -H 'content-type: application/json' -d '${JSON.stringify(body)}'`,
    '```',
    '',
    "Portico reads the server's 401, its protected-resource metadata and its authorization server's metadata when the connection is created, and registers there; each end user then authorizes through the connection's authorization link (PKCE S256, the server named as the resource). See [Remote MCP servers](../guides/remote-mcp-servers.md) for the tool names and the lifecycle.",
    '',
    '## What the end user sees',
    '',
    `The authorization link sends them to the consent screen of the authorization server ${p.displayName}'s server names in its metadata; after they allow access they come back to Portico's result page, or to your \`redirect_url\`.`,
    '',
    '## Proxy',
    '',
    `\`ANY /proxy/{path}\` goes to ${code(`${p.api.baseUrl}/{path}`)} as the end user, with ${code('Authorization: Bearer <token>')}; the tools speak MCP to ${code(mcp.url)}.`,
    '',
    '## Sandbox',
    '',
    `A connection with \`"sandbox": true\` talks to the sandbox's emulated remote MCP server instead (its notes tools, not ${p.displayName}'s), discovered and registered dynamically, with its own authorization server: the connection, the link, the tools, refresh and the sandbox operations (\`expire-tokens\`, \`revoke-grants\`) run offline.`,
    '',
  ].join('\n');
}

export function providerPage(p: ProviderDefinition): string {
  if (p.mcp) return mcpServerPage(p, p.mcp);
  const out: string[] = [];
  out.push(`# ${p.displayName}`, '');
  out.push(
    `<!-- Generated from packages/gateway/providers/${p.key}.json by npm run docs:providers; do not edit. -->`,
    '',
  );
  out.push(
    table(
      ['Key', 'Category', 'Authentication', 'Checked against'],
      [[code(p.key), p.kind, AUTH_NAMES[p.auth], p.docsUrl ? `[${p.docsUrl}](${p.docsUrl})` : '—']],
    ),
    '',
  );
  if (p.toolPrefix)
    out.push(`Typed tools: \`${p.toolPrefix}_*\` (see [the tool list](../tools/${p.toolPrefix}.md)).`, '');

  out.push('## Register at the provider', '');
  if (p.setup.console) out.push(`Where: [${p.setup.console.name}](${p.setup.console.url})`, '');
  if (p.setup.steps.length) {
    p.setup.steps.forEach((step, i) => {
      out.push(`${i + 1}. ${step.replaceAll('{redirect_uri}', 'the redirect URI')}`);
    });
    out.push('');
  }
  if (p.oauth) {
    out.push(
      `The redirect URI is ${REDIRECT_URI}: Portico shows it on the connection (\`redirect_uri\` in the API, the dashboard's connection page) once the connection exists; create the connection first, then register it.`,
      '',
    );
  } else {
    out.push('There is no OAuth app to register: each end user brings their own credential.', '');
  }

  const connectionParams = p.parameters.filter((x) => x.source === 'connection');
  out.push('## Create a connection', '');
  const body: Record<string, unknown> = { name: `${p.key.replaceAll('_', '-')}`, provider: p.key };
  if (p.oauth) Object.assign(body, { client_id: '…', client_secret: '…' });
  const params = connectionParams.filter((x) => x.name !== 'tenant');
  if (params.length)
    body.parameters = Object.fromEntries(params.map((x) => [x.name, x.default ?? `<${x.name}>`]));
  out.push(
    '```bash',
    `curl -s localhost:8080/api/v1/connections -H "Authorization: Bearer $TOKEN" \\`,
    `  -H 'content-type: application/json' -d '${JSON.stringify(body)}'`,
    '```',
    '',
    'Add `"sandbox": true` (and leave out the client credentials) to try it against the emulator first.',
    '',
  );
  if (connectionParams.length) {
    out.push(
      table(
        ['Connection parameter', 'Required', 'Default', 'Meaning'],
        connectionParams.map((x) => [
          x.name === 'tenant' ? '`tenant` (its own field)' : code(x.name),
          x.default === undefined ? 'yes' : 'no',
          x.default ?? '—',
          [x.description, x.pattern ? `must match ${code(x.pattern)}` : ''].filter(Boolean).join('; ') || '—',
        ]),
      ),
      '',
    );
  }

  if (p.oauth) {
    const o = p.oauth;
    out.push('## Scopes', '');
    out.push(
      `Default scopes (when the connection names none): ${o.defaultScopes.length ? o.defaultScopes.map(code).join(', ') : 'none'}.`,
    );
    if (o.requiredScopes.length) out.push(`Always requested: ${o.requiredScopes.map(code).join(', ')}.`);
    out.push('');
    if (p.setup.scopes.length)
      out.push(
        table(
          ['Scope', 'What it allows'],
          p.setup.scopes.map((s) => [code(s.scope), s.description]),
        ),
        '',
      );
  }

  out.push('## What the end user sees', '');
  if (p.oauth) {
    out.push(
      `The authorization link sends them to ${p.displayName}'s consent screen (${code(new URL(p.oauth.authorizeUrl.replace(/\{[a-z_]+\}/g, 'x')).host)}); after they allow access they come back to Portico's result page, or to your \`redirect_url\`.`,
      '',
    );
  } else {
    const form = p.form!;
    const fields =
      p.auth === 'basic' ? `their ${form.usernameLabel} and ${form.passwordLabel}` : `their ${form.label}`;
    out.push(
      `The authorization link opens Portico's own form, which asks for ${fields}${form.help ? ` (${form.help})` : ''}.${p.userInfo ? ` Portico checks it with ${code(`${p.userInfo.method} ${p.userInfo.url}`)} before storing it; a refused entry is asked for again.` : ''} It is stored sealed like an OAuth token.`,
      '',
    );
  }

  out.push('## Proxy', '');
  out.push(
    `\`ANY /proxy/{path}\` goes to ${code(`${p.api.baseUrl}/{path}`)} as the end user, with ${
      p.api.credential.in === 'query'
        ? `the credential in the query parameter ${code(p.api.credential.name)}`
        : `${code(`${headerName(p.api.credential.name)}: ${p.api.credential.value}`)}`
    }.`,
  );
  const tokenParams = p.parameters.filter((x) => x.source === 'token');
  for (const x of tokenParams)
    out.push(
      `${code(`{${x.name}}`)} is the account's own value, from ${code(x.path ?? x.name)} in the token response.`,
    );
  const defaults = Object.entries(p.api.defaultHeaders);
  if (defaults.length)
    out.push(`Sent unless the caller sets them: ${defaults.map(([k, v]) => code(`${k}: ${v}`)).join(', ')}.`);
  if (p.api.versionHeader) out.push(`\`upstream_version\` is sent as ${code(p.api.versionHeader)}.`);
  for (const r of p.api.pathRewrites)
    out.push(
      `${code(r.from)} is sent as ${code(r.to)}${r.exact ? ' (that exact path)' : ''}${r.query ? ` with ${code(new URLSearchParams(r.query).toString())}` : ''}.`,
    );
  for (const l of p.api.rateLimits)
    out.push(
      `Portico's rate governor keeps calls under ${l.requests} requests per ${l.perSeconds} s per ${l.scope === 'account' ? 'end-user account' : 'connection'} (the provider's documented limit); calls over it wait their turn.`,
    );
  out.push('');
  out.push(
    '```bash',
    `curl -s localhost:8080/proxy/<path> -H "Authorization: Bearer $TOKEN" \\`,
    `  -H 'connection_name: ${body.name}' -H 'identifier: user_42'`,
    '```',
    '',
  );

  if (p.oauth) {
    const o = p.oauth;
    out.push('## Token lifecycle', '');
    const lines = [
      `Token endpoint: ${code(o.tokenUrl)}, client authentication ${code(o.clientAuth)}, ${o.tokenBody === 'json' ? 'JSON' : 'form'} body${o.pkce ? ', PKCE (S256)' : ''}.`,
      `Refresh ${o.refreshMarginSeconds} s before expiry${o.refreshRotates ? '; every refresh returns a new refresh token and retires the old one (stored before it is used)' : ''}.`,
      ...(o.refreshTokenIdleDays
        ? [
            `${p.displayName} expires refresh tokens unused for ${o.refreshTokenIdleDays} days: idle accounts are refreshed in the background two weeks before.`,
          ]
        : []),
      o.revocation
        ? `Disconnecting an account revokes its ${o.revocation.token} token at ${code(o.revocation.url)}.`
        : `${p.displayName} has no revocation endpoint Portico calls: disconnecting wipes the tokens on Portico's side only.`,
    ];
    out.push(...lines.map((l) => `- ${l}`), '');
  }
  out.push('## Sandbox', '');
  out.push(
    p.emulator === 'definitions'
      ? 'Sandbox connections talk to the definitions emulator, which plays this provider from this definition: consent, token responses in the same shape, refresh, revocation, and an echo API that checks the credential where the provider expects it.'
      : `Sandbox connections talk to Portico's ${p.emulator} emulator, which speaks the provider's wire format.`,
    '',
  );
  return `${out.join('\n').trimEnd()}\n`;
}

function headerName(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => `${dash}${c.toUpperCase()}`);
}

export function providerIndex(providers: ProviderDefinition[]): string {
  const out = [
    '# Providers',
    '',
    '<!-- Generated by npm run docs:providers; do not edit. -->',
    '',
    `Portico ships ${providers.length} providers, each a JSON definition in \`packages/gateway/providers/\`; operators add their own through \`POST /api/v1/providers\` (see [the definition format](definition-format.md)). Every one is exercised end to end against the sandbox in \`test/providers-sandbox.test.ts\`.`,
    '',
    table(
      ['Provider', 'Key', 'Category', 'Authentication', 'Typed tools'],
      providers.map((p) => [
        `[${p.displayName}](${p.key}.md)`,
        code(p.key),
        p.kind,
        p.mcp ? 'Remote MCP server (OAuth 2.1, discovered)' : AUTH_NAMES[p.auth],
        p.toolPrefix ? code(`${p.toolPrefix}_*`) : p.mcp ? "the server's, `{connection}__{tool}`" : 'proxy',
      ]),
    ),
    '',
  ];
  return `${out.join('\n').trimEnd()}\n`;
}

interface SchemaNode {
  description?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  pattern?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  items?: SchemaNode;
  $ref?: string;
  oneOf?: SchemaNode[];
  additionalProperties?: SchemaNode | boolean;
}

/** The definition format, field by field, from the JSON Schema's own descriptions. */
export function definitionFormatPage(
  schema: SchemaNode & { definitions: Record<string, SchemaNode> },
): string {
  const resolve = (node: SchemaNode): SchemaNode =>
    node.$ref
      ? {
          ...schema.definitions[node.$ref.split('/').pop()!]!,
          ...(node.description ? { description: node.description } : {}),
        }
      : node;
  const typeOf = (node: SchemaNode): string => {
    const n = resolve(node);
    if (n.const !== undefined) return code(JSON.stringify(n.const));
    if (n.enum) return n.enum.map((v) => code(JSON.stringify(v))).join(' or ');
    if (n.oneOf) return n.oneOf.map(typeOf).join(' or ');
    if (n.type === 'array') return `array of ${n.items ? typeOf(n.items) : 'values'}`;
    if (Array.isArray(n.type)) return n.type.join(' or ');
    return n.type ?? 'object';
  };
  const rows: string[][] = [];
  const walk = (node: SchemaNode, prefix: string) => {
    const n = resolve(node);
    for (const [name, child] of Object.entries(n.properties ?? {})) {
      if (name === '$schema' || (name === 'kind' && prefix === 'auth.')) continue;
      const c = resolve(child);
      const path = `${prefix}${name}`;
      rows.push([
        code(path),
        typeOf(child),
        n.required?.includes(name) ? 'yes' : '',
        [
          c.description ?? child.description,
          c.default !== undefined ? `Default ${code(JSON.stringify(c.default))}.` : '',
        ]
          .filter(Boolean)
          .join(' '),
      ]);
      if (c.type === 'object' && c.properties) walk(c, `${path}.`);
      if (c.type === 'array' && c.items && resolve(c.items).properties) walk(resolve(c.items), `${path}[].`);
    }
  };
  const out = [
    '# Provider definition format',
    '',
    '<!-- Generated from packages/gateway/providers/provider.schema.json by npm run docs:providers; do not edit. -->',
    '',
    schema.description ?? '',
    '',
    'Editors validate a file that starts with `"$schema": "./provider.schema.json"` (built-in definitions) or the schema\'s path in your repository. `POST /api/v1/providers` refuses a definition with mistakes, naming each field (`errors[].path`). A definition may be at most 64 KiB of JSON (`413 payload_too_large`), with no string over 2,048 characters, and an environment holds at most 100 custom providers (`409 limit_reached`).',
    '',
    '## Top level',
    '',
  ];
  walk(schema, '');
  out.push(table(['Field', 'Type', 'Required', 'Meaning'], rows), '');
  for (const kind of ['oauth2', 'api_key', 'basic']) {
    rows.length = 0;
    walk(schema.definitions[kind]!, 'auth.');
    out.push(
      `## \`auth\` with \`"kind": "${kind}"\``,
      '',
      schema.definitions[kind]!.properties!.kind!.description ?? '',
      '',
    );
    out.push(table(['Field', 'Type', 'Required', 'Meaning'], rows), '');
  }
  out.push(
    '## Paths and placeholders',
    '',
    '- A path such as `authed_user.access_token` reads nested fields of a JSON body; `errors[*].reason` reads every item of an array.',
    '- `{name}` in a URL is a parameter: `source: "connection"` values are given when the connection is created (`parameters`, or `tenant`), `source: "token"` values are read from the token response (e.g. Salesforce\'s `instance_url`) and are known only for accounts. The revocation URL may also use `{token}` and `{client_id}`.',
    '- `api.credential.value`: `{token}` is the access token or API key, `{basic}` is base64 of `user:password`.',
    '',
  );
  return `${out.join('\n').trimEnd()}\n`;
}
