import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { createSandboxConnection, sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { gatewayToken } from './helpers/token.js';

// Errors that say what is allowed, so a person or an agent can fix the call from the error alone.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The docs/….md(#heading) a text points to that do not exist (file or heading): none, we hope. */
function documentedAt(text: string): string[] {
  const missing: string[] = [];
  for (const [target, file, anchor] of text.matchAll(/\b(docs\/[\w/.-]+\.md)(?:#([\w-]+))?/g)) {
    const full = path.join(ROOT, file!);
    if (!existsSync(full)) missing.push(target);
    else if (anchor) {
      const headings = readFileSync(full, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('#'))
        .map((l) =>
          l
            .replace(/^#+\s*/, '')
            .toLowerCase()
            .replace(/[^\w\s-]/g, '')
            .replace(/\s/g, '-'),
        );
      if (!headings.includes(anchor)) missing.push(target);
    }
  }
  return missing;
}

describe('what Portico tells people to read', () => {
  it('points to documentation pages that exist, never to a README section', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)],
      );
    const sources = [
      ...files(path.join(ROOT, 'packages/gateway/src')),
      ...files(path.join(ROOT, 'packages/gateway/dashboard-ui')),
    ].filter((f) => /\.(ts|js)$/.test(f));
    const readmeMentions: string[] = [];
    const broken: string[] = [];
    for (const file of sources) {
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        // Comments speak to developers, who have the README; strings and page text reach users.
        if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
        const where = `${path.relative(ROOT, file)}:${i + 1}`;
        if (/README/.test(line)) readmeMentions.push(where);
        for (const target of documentedAt(line)) broken.push(`${where} ${target}`);
      });
    }
    expect(readmeMentions).toEqual([]);
    expect(broken).toEqual([]);
  });
});

describe.each(BACKENDS)('errors that list what is allowed on $name', (backend) => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(backend);
    await sandboxAccount(t, { provider: 'notion', identifier: 'guided' });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('an unknown provider lists the providers', async () => {
    const res = await t.api('/api/v1/connections', {
      method: 'POST',
      json: { name: 'x', provider: 'notionn', sandbox: true },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as {
      detail: string;
      did_you_mean: string;
      errors: Array<{ path: string; message: string }>;
    };
    expect(body.errors).toEqual([
      {
        path: '/provider',
        message: expect.stringMatching(
          /^must be one of: notion, google_calendar, google_drive, google_sheets, google_docs, hubspot, sharepoint, .*slack/,
        ),
      },
    ]);
    expect(body.did_you_mean).toBe('notion');
    expect(body.detail).toContain('did you mean "notion"');
    expect(body.detail).not.toMatch(/constant|anyOf/);
  });

  it('an unknown format lists the formats', async () => {
    const res = await t.api('/api/v1/tools?format=gemini');
    expect(res.status).toBe(400);
    const body = (await res.json()) as { errors: Array<{ path: string; message: string }> };
    expect(body.errors[0]!.message).toBe('must be one of: json_schema, openai, anthropic, mcp');
  });

  it('a mistyped tool name suggests the closest one', async () => {
    const res = await t.api('/api/v1/tools/execute', {
      method: 'POST',
      json: { tool_name: 'notes_page_gett', identifier: 'guided', tool_input: {} },
    });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { code: string; detail: string; did_you_mean: string };
    expect(body.code).toBe('unknown_tool');
    expect(body.did_you_mean).toBe('notes_page_get');
    expect(body.detail).toContain('Did you mean "notes_page_get"?');
    const far = (await (await t.api('/api/v1/tools/completely_different')).json()) as Record<string, unknown>;
    expect(far.did_you_mean).toBeUndefined();
  });

  it('a proxy call naming a connection that does not exist is connection_not_found', async () => {
    const missing = await t.api('/proxy/v1/users/me', {
      headers: { connection_name: 'no-such-connection', identifier: 'guided' },
    });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'connection_not_found' });
    const noAccount = await t.api('/proxy/v1/users/me', {
      headers: { connection_name: 'sandbox-notion', identifier: 'nobody' },
    });
    // A never-seen identifier on a named connection is asked to authorize, with the link to do so.
    expect(noAccount.status).toBe(409);
    expect(await noAccount.json()).toMatchObject({
      code: 'account_not_active',
      account_status: 'PENDING_AUTH',
      authorization_link: { link: expect.stringContaining('/connect/') },
    });
  });

  it('listing the tools of a proxy-only provider says so, and where the proxy is documented', async () => {
    for (const provider of ['sharepoint', 'slack']) {
      const res = await t.api(`/api/v1/tools?provider=${provider}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { data: unknown[]; notice: string };
      expect(body.data).toEqual([]);
      expect(body.notice).toMatch(/proxy-only/);
      expect(body.notice).toContain(`docs/providers/${provider}.md#proxy`);
      expect(body.notice).not.toContain('README');
      expect(documentedAt(body.notice)).toEqual([]);
    }
    const notion = (await (await t.api('/api/v1/tools?provider=notion')).json()) as Record<string, unknown>;
    expect(notion.notice).toBeUndefined();
  });

  it('an unknown connection name is told the connection meant, among those the caller may reach', async () => {
    // The provider's name where the connection's belongs: the likeliest mistake.
    const run = await t.api('/api/v1/tools/execute', {
      method: 'POST',
      json: { tool_name: 'notes_user_list', identifier: 'guided', connection_name: 'notion' },
    });
    expect(run.status).toBe(404);
    const problem = (await run.json()) as { code: string; detail: string; did_you_mean?: string };
    expect(problem).toMatchObject({ code: 'connection_not_found', did_you_mean: 'sandbox-notion' });
    expect(problem.detail).toContain('did you mean "sandbox-notion"');
    const link = await t.api('/api/v1/connected-accounts/authorization-link', {
      method: 'POST',
      json: { connection_name: 'sandbox-notoin', identifier: 'guided' },
    });
    expect(link.status).toBe(404);
    expect(await link.json()).toMatchObject({ did_you_mean: 'sandbox-notion' });
    expect(await (await t.api('/api/v1/connections/Notion')).json()).toMatchObject({
      code: 'connection_not_found',
      did_you_mean: 'sandbox-notion',
    });

    // A client limited to a connection "notion" (since deleted) is not told of the others.
    await createSandboxConnection(t, 'notion', 'notion');
    const created = await t.api('/api/v1/clients', {
      method: 'POST',
      json: { name: 'limited-guess', scopes: ['runtime'], connection_names: ['notion'] },
    });
    expect(created.status).toBe(201);
    const { client_id, client_secret } = (await created.json()) as Record<string, string>;
    expect((await t.api('/api/v1/connections/notion', { method: 'DELETE' })).status).toBe(204);
    const limited = await t.api('/api/v1/tools/execute', {
      method: 'POST',
      token: await gatewayToken(t.url, client_id!, client_secret!),
      json: { tool_name: 'notes_user_list', identifier: 'guided', connection_name: 'notion' },
    });
    expect(limited.status).toBe(404);
    const answer = (await limited.json()) as Record<string, unknown>;
    expect(answer.code).toBe('connection_not_found');
    expect(answer).not.toHaveProperty('did_you_mean');
    expect(JSON.stringify(answer)).not.toContain('sandbox-notion');
  });

  it('a provider spelled with dashes or spaces is suggested its key', async () => {
    for (const provider of ['google-calendar', 'Google Calendar']) {
      const res = await t.api('/api/v1/connections', {
        method: 'POST',
        json: { name: 'x', provider, sandbox: true },
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { did_you_mean: string }).did_you_mean).toBe('google_calendar');
    }
  });

  it('a missing connection parameter reads as one sentence, ending in one period', async () => {
    const res = await t.api('/api/v1/connections', {
      method: 'POST',
      json: { name: 'zd', provider: 'zendesk', sandbox: true },
    });
    expect(res.status).toBe(400);
    const { detail } = (await res.json()) as { detail: string };
    expect(detail).toContain('acme.zendesk.com');
    expect(detail).toMatch(/[^.]\.$/);
  });

  it('a missing required tool parameter is said without the specification’s jargon', async () => {
    const res = await t.api('/api/v1/tools/execute', {
      method: 'POST',
      json: { tool_name: 'notes_page_content_get', identifier: 'guided', tool_input: {} },
    });
    expect(res.status).toBe(400);
    const text = JSON.stringify(await res.json());
    expect(text).toMatch(
      /is required \(rule: a missing required parameter is invalid; this tool cannot run without it\)/,
    );
    expect(text).not.toMatch(/specification marks|parameter R\b/);
  });
});
