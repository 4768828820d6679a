import { AIMessage } from '@langchain/core/messages';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { submitConsent } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aiSdk, type PorticoToolOutput } from '../../sdk/src/adapters/ai.js';
import { anthropic } from '../../sdk/src/adapters/anthropic.js';
import { langchain, runToolCalls } from '../../sdk/src/adapters/langchain.js';
import { openaiChat, openaiResponses } from '../../sdk/src/adapters/openai.js';
import {
  AccountNotActiveError,
  AUTHORIZE_TOOL,
  type AuthorizationRequired,
  authorizationRequired,
  type JsonSchema,
  Portico,
  type ToolsForOptions,
} from '../../sdk/src/index.js';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

/**
 * An agent built with each LLM framework adapter, for an end user who has not connected the app
 * its tools need: `portico_authorize` and the tools' own answers give the model a link to show the
 * user; once the user has opened it and consented, the same agent's calls run.
 */

/** One tool call as the model would read its result. */
interface Reply {
  text: string;
  /** The framework's error flag (`is_error`, an error ToolMessage, `error-text`); OpenAI has none. */
  isError: boolean | undefined;
  /** The structured authorization, where the framework hands the application one. */
  authorization: AuthorizationRequired | undefined;
}

interface Agent {
  names: string[];
  definition(name: string): { description: string; schema: JsonSchema };
  call(name: string, input: Record<string, unknown>): Promise<Reply>;
}

interface AdapterCase {
  name: string;
  agent(portico: Portico, options: ToolsForOptions): Promise<Agent>;
}

let callId = 0;
const nextId = () => `call_${++callId}`;

function found<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} is missing`);
  return value;
}

const ADAPTERS: AdapterCase[] = [
  {
    name: 'openai-chat',
    async agent(portico, options) {
      const tools = await portico.tools.for(openaiChat, options);
      return {
        names: tools.definitions.map((d) => d.function.name),
        definition(name) {
          const fn = found(
            tools.definitions.find((d) => d.function.name === name),
            name,
          ).function;
          return { description: fn.description ?? '', schema: fn.parameters as JsonSchema };
        },
        async call(name, input) {
          const messages = await tools.run({
            tool_calls: [
              { id: nextId(), type: 'function', function: { name, arguments: JSON.stringify(input) } },
            ],
          });
          expect(messages).toHaveLength(1);
          return { text: messages[0]!.content as string, isError: undefined, authorization: undefined };
        },
      };
    },
  },
  {
    name: 'openai-responses',
    async agent(portico, options) {
      const tools = await portico.tools.for(openaiResponses, options);
      return {
        names: tools.definitions.map((d) => d.name),
        definition(name) {
          const fn = found(
            tools.definitions.find((d) => d.name === name),
            name,
          );
          return { description: fn.description ?? '', schema: fn.parameters as JsonSchema };
        },
        async call(name, input) {
          const items = await tools.run([
            {
              type: 'function_call',
              call_id: nextId(),
              name,
              arguments: JSON.stringify(input),
            },
          ]);
          expect(items).toHaveLength(1);
          return { text: items[0]!.output as string, isError: undefined, authorization: undefined };
        },
      };
    },
  },
  {
    name: 'anthropic',
    async agent(portico, options) {
      const tools = await portico.tools.for(anthropic, options);
      return {
        names: tools.definitions.map((d) => d.name),
        definition(name) {
          const d = found(
            tools.definitions.find((t) => t.name === name),
            name,
          );
          return { description: d.description ?? '', schema: d.input_schema as JsonSchema };
        },
        async call(name, input) {
          const [reply] = await tools.run({
            content: [{ type: 'tool_use', id: nextId(), name, input }] as never,
          });
          const results = reply!.content as Array<{ content: string; is_error?: boolean }>;
          expect(results).toHaveLength(1);
          return {
            text: results[0]!.content,
            isError: results[0]!.is_error === true,
            authorization: undefined,
          };
        },
      };
    },
  },
  {
    name: 'ai',
    async agent(portico, options) {
      const tools = await portico.tools.for(aiSdk, options);
      return {
        names: Object.keys(tools),
        definition(name) {
          const t = found(tools[name], name);
          return {
            description: t.description ?? '',
            schema: (t.inputSchema as unknown as { jsonSchema: JsonSchema }).jsonSchema,
          };
        },
        async call(name, input) {
          const t = found(tools[name], name);
          const toolCallId = nextId();
          const output = (await t.execute!(input, { toolCallId, messages: [] })) as PorticoToolOutput;
          const model = await t.toModelOutput!({ toolCallId, input, output });
          expect(['text', 'error-text']).toContain(model.type);
          return {
            text: (model as { value: string }).value,
            isError: model.type === 'error-text',
            authorization: 'authorization' in output ? output.authorization : undefined,
          };
        },
      };
    },
  },
  {
    name: 'langchain',
    async agent(portico, options) {
      const tools = await portico.tools.for(langchain, options);
      return {
        names: tools.map((t) => t.name),
        definition(name) {
          const fn = convertToOpenAITool(
            found(
              tools.find((t) => t.name === name),
              name,
            ),
          ).function;
          return { description: fn.description ?? '', schema: fn.parameters as JsonSchema };
        },
        async call(name, input) {
          const messages = await runToolCalls(
            tools,
            new AIMessage({
              content: '',
              tool_calls: [{ id: nextId(), name, args: input, type: 'tool_call' }],
            }),
          );
          expect(messages).toHaveLength(1);
          const message = messages[0]!;
          return {
            text: message.content as string,
            isError: message.status === 'error',
            authorization: message.artifact as AuthorizationRequired | undefined,
          };
        },
      };
    },
  },
];

const LINK = /https?:\/\/\S+\/connect\/[A-Za-z0-9]+/;
const CONNECT_NOTION =
  'Ask the user to open this link to connect their Notion account; tools for it become available once they have.';

function linkIn(text: string): string {
  const match = LINK.exec(text);
  if (!match) throw new Error(`no authorization link in: ${text}`);
  return match[0];
}

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}="([^"]*)"`, 'i').exec(tag);
  return match ? decodeEntities(match[1]!) : undefined;
}

function decodeEntities(value: string): string {
  return value
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/**
 * Plays the end user with the link the agent showed them, whatever the link answers: a redirect to
 * the provider's consent (302/303), or a page whose form is posted (with the cookies it set) to get
 * that redirect. Then consents at the emulator and follows back to the gateway's callback.
 */
async function connectThroughLink(link: string): Promise<Response> {
  const jar = new Map<string, string>();
  const keep = (res: Response) => {
    for (const cookie of res.headers.getSetCookie()) {
      const pair = cookie.split(';')[0]!;
      jar.set(pair.slice(0, pair.indexOf('=')), pair);
    }
  };
  const cookie = () => [...jar.values()].join('; ');
  let res = await fetch(link, { redirect: 'manual' });
  keep(res);
  if (res.status === 200) {
    const html = await res.text();
    const form = /<form\b[^>]*>/i.exec(html);
    if (!form) throw new Error(`the link's page has no form: ${html.slice(0, 300)}`);
    const action = new URL(attribute(form[0], 'action') ?? '', link);
    const fields = new URLSearchParams();
    for (const input of html.matchAll(/<input\b[^>]*>/gi)) {
      const name = attribute(input[0], 'name');
      if (name && attribute(input[0], 'type') !== 'submit')
        fields.append(name, attribute(input[0], 'value') ?? '');
    }
    const button = /<button\b[^>]*\sname="[^"]*"[^>]*>/i.exec(html);
    if (button) fields.append(attribute(button[0], 'name')!, attribute(button[0], 'value') ?? '');
    const body = fields.toString();
    res = await fetch(action, {
      method: (attribute(form[0], 'method') ?? 'get').toUpperCase() === 'POST' ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        ...(jar.size ? { cookie: cookie() } : {}),
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(body ? { body } : {}),
    });
    keep(res);
  }
  expect([302, 303], await res.clone().text()).toContain(res.status);
  const authorizeUrl = new URL(res.headers.get('location')!, link).toString();
  const callbackUrl = await submitConsent(authorizeUrl, { decision: 'allow' });
  return fetch(callbackUrl, { redirect: 'manual', headers: { cookie: cookie() } });
}

async function expectConnected(link: string): Promise<void> {
  const done = await connectThroughLink(link);
  expect(done.status, await done.clone().text()).toBe(200);
}

describe.each(BACKENDS)('LLM framework adapters and authorization on $name', (backend) => {
  let t: TestGateway;
  let portico: Portico;

  beforeAll(async () => {
    t = await startTestGateway(backend);
    portico = new Portico({ envUrl: t.url, clientId: t.clientId, clientSecret: t.clientSecret });
    await portico.connections.create({ name: 'notes', provider: 'notion', sandbox: true });
    await portico.connections.create({ name: 'crm', provider: 'hubspot', sandbox: true });
    // Two connections serve Google Docs: a user without an account must choose one.
    await portico.connections.create({ name: 'docs-a', provider: 'google_docs', sandbox: true });
    await portico.connections.create({ name: 'docs-b', provider: 'google_docs', sandbox: true });
  });
  afterAll(async () => {
    await t?.close();
  });

  describe.each(ADAPTERS)('$name', (adapter) => {
    it('a never-seen user: only portico_authorize; its link connects them, then the tools are theirs', async () => {
      const identifier = `fresh_${adapter.name}`;
      const agent = await adapter.agent(portico, { identifier });
      expect(agent.names).toEqual([AUTHORIZE_TOOL]);
      const { description, schema } = agent.definition(AUTHORIZE_TOOL);
      expect(description).toContain('notes (Notion)');
      expect(description).toContain('crm (HubSpot)');
      expect(schema).toMatchObject({ type: 'object', required: ['connection_name'] });
      const property = (schema.properties as Record<string, JsonSchema>).connection_name!;
      expect(property.enum).toEqual(expect.arrayContaining(['notes', 'crm', 'docs-a', 'docs-b']));

      const wrong = await agent.call(AUTHORIZE_TOOL, { connection_name: 'calendar' });
      expect(wrong.isError).not.toBe(false);
      expect(wrong.text).toMatch(/^connection_name must be one of: .*notes \(Notion\)/);

      const reply = await agent.call(AUTHORIZE_TOOL, { connection_name: 'notes' });
      expect(reply.isError).not.toBe(true);
      expect(reply.text).toContain(CONNECT_NOTION);
      const link = linkIn(reply.text);
      expect(link.startsWith(`${t.url}/connect/`)).toBe(true);
      if (reply.authorization) {
        expect(reply.authorization).toMatchObject({ link, connectionName: 'notes', providerName: 'Notion' });
      }
      await expectConnected(link);

      // The next turn's tool set has the Notion tools, and portico_authorize says it is connected.
      const next = await adapter.agent(portico, { identifier });
      expect(next.names).toContain('notes_data_fetch');
      expect(next.names.some((n) => n.startsWith('crm_'))).toBe(false);
      expect(next.definition(AUTHORIZE_TOOL).description).toContain('notes (Notion, connected)');
      const fetched = await next.call('notes_data_fetch', { page_size: 1 });
      expect(fetched.isError).not.toBe(true);
      expect(JSON.parse(fetched.text).results).toHaveLength(1);
    });

    it('includeUnauthorized: a tool of an app not connected yet answers the link, then runs once the user has', async () => {
      const identifier = `later_${adapter.name}`;
      const agent = await adapter.agent(portico, { identifier, includeUnauthorized: true });
      expect(agent.names).toEqual(
        expect.arrayContaining([
          'notes_data_fetch',
          'crm_contacts_list',
          'docs_read_document',
          AUTHORIZE_TOOL,
        ]),
      );
      // Providers without a connection are still left out.
      expect(agent.names.some((n) => n.startsWith('calendar_'))).toBe(false);

      const blocked = await agent.call('notes_data_fetch', { page_size: 1 });
      expect(blocked.isError).not.toBe(false);
      expect(blocked.text).toMatch(/^Authorization required\. notes_data_fetch cannot run/);
      expect(blocked.text).toContain('has not connected their Notion account (connection "notes") yet');
      expect(blocked.text).toContain(CONNECT_NOTION);
      const link = linkIn(blocked.text);
      if (blocked.authorization) {
        expect(blocked.authorization).toMatchObject({
          link,
          connectionName: 'notes',
          provider: 'notion',
          providerName: 'Notion',
          accountStatus: 'PENDING_AUTH',
          connectedAccountId: expect.stringMatching(/^ca_/),
        });
      }
      // The gateway made the user's account, pending, as get-or-create would.
      const { data: accounts } = await portico.connectedAccounts.list({ identifier });
      expect(accounts.map((a) => [a.connectionName, a.status])).toEqual([['notes', 'PENDING_AUTH']]);

      await expectConnected(link);
      const ran = await agent.call('notes_data_fetch', { page_size: 1 });
      expect(ran.isError).not.toBe(true);
      expect(JSON.parse(ran.text).results).toHaveLength(1);
    });
  });

  it('LangChain: a tool invoked without a tool call returns the authorization text instead of throwing', async () => {
    const tools = await portico.tools.for(langchain, { identifier: 'lc_direct', includeUnauthorized: true });
    const fetch = found(
      tools.find((t) => t.name === 'crm_contacts_list'),
      'crm_contacts_list',
    );
    const text = (await fetch.invoke({})) as string;
    expect(text).toMatch(/^Authorization required\. crm_contacts_list cannot run/);
    expect(text).toContain('connect their HubSpot account');
    expect(text).toMatch(LINK);
  });

  it('a tool whose app has several connections tells the model to choose one with portico_authorize', async () => {
    const identifier = 'docs_chooser';
    const agent = await ADAPTERS.find((a) => a.name === 'anthropic')!.agent(portico, {
      identifier,
      includeUnauthorized: true,
    });
    const reply = await agent.call('docs_read_document', {
      document_id: '1Pq7Yh3xKc2eN0dVfWmBzRtL9sAaJgU4oHiE5nX6yC8w',
    });
    expect(reply.isError).toBe(true);
    expect(reply.text).toContain('docs-a, docs-b');
    expect(reply.text).toContain(`Call ${AUTHORIZE_TOOL} with the connection_name`);
    const chosen = await agent.call(AUTHORIZE_TOOL, { connection_name: 'docs-b' });
    expect(chosen.text).toContain('connect their Google Docs account');
    await expectConnected(linkIn(chosen.text));
    const { data: accounts } = await portico.connectedAccounts.list({ identifier, status: 'ACTIVE' });
    expect(accounts.map((a) => a.connectionName)).toEqual(['docs-b']);
  });

  it('authorizeTool: false and the tools/providers filters shape portico_authorize', async () => {
    const identifier = 'filters_user';
    const names = async (options: Omit<ToolsForOptions, 'identifier'>) =>
      (await portico.tools.for(anthropic, { identifier, ...options })).definitions.map((d) => d.name);
    expect(await names({ authorizeTool: false })).toEqual([]);
    expect(await names({ authorizeTool: false, includeUnauthorized: true })).not.toContain(AUTHORIZE_TOOL);
    // A list of tools is the whole list: portico_authorize comes only when named.
    expect(await names({ tools: ['crm_contacts_list'], includeUnauthorized: true })).toEqual([
      'crm_contacts_list',
    ]);
    const named = await portico.tools.for(anthropic, {
      identifier,
      tools: ['crm_contacts_list', AUTHORIZE_TOOL],
      includeUnauthorized: true,
    });
    expect(named.definitions.map((d) => d.name)).toEqual(['crm_contacts_list', AUTHORIZE_TOOL]);
    // Only the connections that could give the listed tools.
    const authorize = named.definitions.find((d) => d.name === AUTHORIZE_TOOL)!;
    expect((authorize.input_schema.properties as Record<string, JsonSchema>).connection_name!.enum).toEqual([
      'crm',
    ]);
    const hubspot = await portico.tools.for(anthropic, { identifier, providers: ['hubspot'] });
    expect(hubspot.definitions.map((d) => d.name)).toEqual([AUTHORIZE_TOOL]);
    expect(hubspot.definitions[0]!.description).toContain('crm (HubSpot)');
    expect(hubspot.definitions[0]!.description).not.toContain('Notion');
    // Nothing the user could connect gives tools: no portico_authorize either.
    expect(await names({ providers: ['google_calendar'] })).toEqual([]);
  });

  it('executeTool and request throw AccountNotActiveError with the link; authorizationRequired reads it', async () => {
    const error = await portico
      .executeTool({
        toolName: 'notes_data_fetch',
        identifier: 'sdk_never_seen',
        toolInput: { page_size: 1 },
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(AccountNotActiveError);
    const authorization = authorizationRequired(error, { providerName: 'Notion' });
    expect(authorization).toMatchObject({
      link: expect.stringMatching(new RegExp(`^${t.url}/connect/`)),
      expiresAt: expect.any(String),
      accountStatus: 'PENDING_AUTH',
      connectedAccountId: expect.stringMatching(/^ca_/),
      instruction: CONNECT_NOTION,
    });
    expect((error as AccountNotActiveError).authorizationLink?.link).toBe(authorization!.link);

    const proxied = await portico
      .request({ connectionName: 'crm', identifier: 'sdk_never_proxied', path: '/crm/v3/objects/contacts' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(proxied).toBeInstanceOf(AccountNotActiveError);
    expect(authorizationRequired(proxied)?.link).toMatch(LINK);
    await expectConnected(authorizationRequired(proxied)!.link);
    const contacts = await portico.request({
      connectionName: 'crm',
      identifier: 'sdk_never_proxied',
      path: '/crm/v3/objects/contacts',
    });
    expect(contacts.status).toBe(200);

    expect(authorizationRequired(new Error('network'))).toBeUndefined();
  });

  // Last: revoking the CRM connection's grants ends every account on it.
  it('an account that stopped working answers a reconnect link in the tool result, whatever the options', async () => {
    const identifier = 'revoked_user';
    await sandboxAccount(t, { provider: 'hubspot', identifier, connection: 'crm' });
    const agents = await Promise.all(ADAPTERS.map((a) => a.agent(portico, { identifier })));
    for (const agent of agents) expect(agent.names).toContain('crm_contacts_list');
    const revoke = await t.api('/api/v1/sandbox/connections/crm/revoke-grants', { method: 'POST' });
    expect(revoke.status).toBe(200);
    let link = '';
    for (const agent of agents) {
      const reply = await agent.call('crm_contacts_list', {});
      expect(reply.isError).not.toBe(false);
      expect(reply.text).toMatch(/^Authorization required\. crm_contacts_list cannot run: /);
      expect(reply.text).toMatch(/reconnect their HubSpot account|not connected their HubSpot account/);
      expect(reply.text).toContain('Ask the user to open this link to connect their HubSpot account');
      link = linkIn(reply.text);
    }
    await expectConnected(link);
    for (const agent of agents) expect((await agent.call('crm_contacts_list', {})).isError).not.toBe(true);
  });
});
