import type { Tool as AnthropicTool, ContentBlock, Message } from '@anthropic-ai/sdk/resources/messages';
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { isStructuredTool } from '@langchain/core/tools';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { generateText, stepCountIs, type ToolSet } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { Ajv } from 'ajv';
import type { ChatCompletion, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { FunctionTool, Response as OpenAIResponse } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../../gateway/test/helpers/backends.js';
import { sandboxAccount } from '../../gateway/test/helpers/flow.js';
import { startTestGateway, type TestGateway } from '../../gateway/test/helpers/gateway.js';
import { aiSdk, type PorticoToolOutput } from '../src/adapters/ai.js';
import { anthropic } from '../src/adapters/anthropic.js';
import { langchain, runToolCalls } from '../src/adapters/langchain.js';
import { openaiChat, openaiResponses } from '../src/adapters/openai.js';
import { AUTHORIZE_TOOL, type JsonSchema, Portico } from '../src/index.js';

const ajv = new Ajv({ strict: false });
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** OpenAI strict mode: every object closed and listing all of its properties as required. */
function expectStrictForm(schema: JsonSchema, where: string): void {
  if (schema.type === 'object' || schema.properties) {
    expect(schema.additionalProperties, where).toBe(false);
    expect([...((schema.required as string[]) ?? [])].sort(), where).toEqual(
      Object.keys((schema.properties as object) ?? {}).sort(),
    );
  }
  for (const child of [
    ...Object.values((schema.properties as Record<string, JsonSchema>) ?? {}),
    ...((schema.anyOf as JsonSchema[]) ?? []),
    ...(schema.items ? [schema.items as JsonSchema] : []),
  ]) {
    expectStrictForm(child, where);
  }
  for (const keyword of ['minLength', 'maxLength', 'uniqueItems', 'patternProperties', 'default']) {
    expect(schema, `${where} ${keyword}`).not.toHaveProperty(keyword);
  }
}

function expectTopLevelAccepted(name: string, description: string | undefined | null, schema: JsonSchema) {
  expect(name).toMatch(NAME);
  expect((description ?? '').length, name).toBeLessThanOrEqual(1024);
  expect(schema.type, name).toBe('object');
  for (const combinator of ['anyOf', 'oneOf', 'allOf']) expect(schema, name).not.toHaveProperty(combinator);
  expect(ajv.validateSchema(schema), name).toBe(true);
}

describe.each(BACKENDS)('LLM framework adapters against a gateway on $name', (backend) => {
  let t: TestGateway;
  let portico: Portico;
  const user = 'agent_user';

  beforeAll(async () => {
    t = await startTestGateway(backend);
    portico = new Portico({ envUrl: t.url, clientId: t.clientId, clientSecret: t.clientSecret });
    await sandboxAccount(t, { provider: 'notion', identifier: user });
    // A connection the user has not authorized: its tools are left out unless asked for.
    await portico.connections.create({ name: 'crm', provider: 'hubspot', sandbox: true });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('offers only the tools of providers with an active account, unless told otherwise', async () => {
    const connected = await portico.tools.for(anthropic, { identifier: user });
    expect(connected.definitions.length).toBeGreaterThan(10);
    // The provider tools, then portico_authorize for the model to hand the user a link.
    const [authorize, ...own] = [...connected.definitions].reverse();
    expect(authorize!.name).toBe(AUTHORIZE_TOOL);
    expect(own.every((d) => d.name.startsWith('notes_'))).toBe(true);
    const all = await portico.tools.for(anthropic, { identifier: user, connectedOnly: false });
    expect(all.definitions).toHaveLength(46);
    const some = await portico.tools.for(anthropic, {
      identifier: user,
      connectedOnly: false,
      providers: ['hubspot'],
      tools: ['crm_contacts_list', 'notes_data_fetch'],
    });
    expect(some.definitions.map((d) => d.name)).toEqual(['crm_contacts_list']);
    const nobody = await portico.tools.for(anthropic, { identifier: 'nobody' });
    expect(nobody.definitions.map((d) => d.name)).toEqual([AUTHORIZE_TOOL]);
    expect(await portico.tools.for(anthropic, { identifier: 'nobody', authorizeTool: false })).toMatchObject({
      definitions: [],
    });
  });

  it('OpenAI Chat Completions: definitions the API accepts (strict where possible) and a tool-call round trip', async () => {
    const tools = await portico.tools.for(openaiChat, { identifier: user, connectedOnly: false });
    const definitions: ChatCompletionTool[] = tools.definitions;
    expect(definitions).toHaveLength(46);
    let strict = 0;
    for (const definition of tools.definitions) {
      const fn = definition.function;
      expectTopLevelAccepted(fn.name, fn.description, fn.parameters as JsonSchema);
      if (fn.strict) {
        strict++;
        expectStrictForm(fn.parameters as JsonSchema, fn.name);
      }
    }
    // Tools with free-form objects (database rows, CRM properties) cannot be strict; the rest are.
    expect(strict).toBeGreaterThanOrEqual(30);
    const byName = new Map(tools.definitions.map((d) => [d.function.name, d.function]));
    expect(byName.get('notes_data_fetch')?.strict).toBe(true);
    expect(byName.get('crm_contact_create')?.strict).toBe(false);

    // What the model answers in strict mode: every property present, null for "not given".
    const strictArgs = { query: null, object: null, page_size: 2, start_cursor: null };
    const fetchSchema = byName.get('notes_data_fetch')!.parameters as JsonSchema;
    const properties = Object.keys(fetchSchema.properties as object);
    const scripted = Object.fromEntries(
      properties.map((p) => [p, p in strictArgs ? strictArgs[p as 'query'] : null]),
    );
    expect(ajv.validate(fetchSchema, scripted), JSON.stringify(ajv.errors)).toBe(true);

    const completion: ChatCompletion = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-scripted',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          logprobs: null,
          message: {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [
              {
                id: 'call_ok',
                type: 'function',
                function: { name: 'notes_data_fetch', arguments: JSON.stringify(scripted) },
              },
              {
                id: 'call_bad',
                type: 'function',
                function: {
                  name: 'notes_data_fetch',
                  arguments: JSON.stringify({ ...scripted, page_size: 1000 }),
                },
              },
              { id: 'call_app', type: 'function', function: { name: 'app_own_tool', arguments: '{}' } },
            ],
          },
        },
      ],
    };
    const messages = await tools.run(completion.choices[0]!.message);
    expect(messages.map((m) => m.tool_call_id)).toEqual(['call_ok', 'call_bad']);
    expect(messages[0]!.role).toBe('tool');
    expect(JSON.parse(messages[0]!.content as string).results).toHaveLength(2);
    expect(messages[1]!.content).toContain('/tool_input/page_size');
  });

  it('OpenAI Responses: function tools and function_call_output items', async () => {
    const tools = await portico.tools.for(openaiResponses, { identifier: user });
    const definitions: FunctionTool[] = tools.definitions;
    for (const d of definitions) expectTopLevelAccepted(d.name, d.description, d.parameters as JsonSchema);
    const output: OpenAIResponse['output'] = [
      {
        type: 'function_call',
        call_id: 'call_1',
        name: 'notes_data_fetch',
        arguments: JSON.stringify({ query: null, object: 'page', page_size: 1, start_cursor: null }),
      },
    ];
    const items = await tools.run(output);
    expect(items).toEqual([{ type: 'function_call_output', call_id: 'call_1', output: expect.any(String) }]);
    expect(JSON.parse(items[0]!.output as string).results.length).toBeLessThanOrEqual(1);
  });

  it('Anthropic: tools and tool_use → tool_result, a failure flagged is_error with the problem', async () => {
    const tools = await portico.tools.for(anthropic, { identifier: user, connectedOnly: false });
    const definitions: AnthropicTool[] = tools.definitions;
    for (const d of definitions) expectTopLevelAccepted(d.name, d.description, d.input_schema as JsonSchema);
    const content: ContentBlock[] = [
      { type: 'text', text: 'Let me look.', citations: null },
      {
        type: 'tool_use',
        id: 'toolu_1',
        name: 'notes_data_fetch',
        input: { page_size: 1 },
        caller: { type: 'direct' },
      },
      { type: 'tool_use', id: 'toolu_2', name: 'crm_contacts_list', input: {}, caller: { type: 'direct' } },
    ];
    const message: Message = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-scripted',
      content,
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 1,
        output_tokens: 1,
        cache_creation_input_tokens: null,
        cache_read_input_tokens: null,
        cache_creation: null,
        server_tool_use: null,
        service_tier: null,
        inference_geo: null,
      },
    } as Message;
    const [reply] = await tools.run(message);
    expect(reply!.role).toBe('user');
    const results = reply!.content as Array<{ tool_use_id: string; content: string; is_error?: boolean }>;
    expect(results[0]).toMatchObject({ tool_use_id: 'toolu_1' });
    expect(results[0]!.is_error).toBeUndefined();
    // No account on the CRM connection: the model reads why, and what to do.
    expect(results[1]).toMatchObject({ tool_use_id: 'toolu_2', is_error: true });
    expect(results[1]!.content).toMatch(/agent_user/);
  });

  it('AI SDK: tool() objects run by generateText against a scripted model', async () => {
    const tools = await portico.tools.for(aiSdk, { identifier: user });
    const toolSet: ToolSet = tools;
    expect(Object.keys(toolSet).every((name) => NAME.test(name))).toBe(true);
    const usage = {
      inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 1, text: 1, reasoning: 0 },
    };
    const model = new MockLanguageModelV3({
      doGenerate: [
        {
          content: [
            { type: 'tool-call', toolCallId: 'c1', toolName: 'notes_data_fetch', input: '{"page_size":1}' },
            { type: 'tool-call', toolCallId: 'c2', toolName: 'notes_data_fetch', input: '{"page_size":0}' },
          ],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage,
          warnings: [],
        },
        {
          content: [{ type: 'text', text: 'Found it.' }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage,
          warnings: [],
        },
      ],
    });
    const result = await generateText({ model, tools, prompt: 'Find my pages.', stopWhen: stepCountIs(3) });
    expect(result.text).toBe('Found it.');
    const outputs = result.steps[0]!.toolResults.map((r) => r.output as PorticoToolOutput);
    expect(outputs[0]).toMatchObject({ ok: true, executionId: expect.stringMatching(/^exec_/) });
    expect(outputs[1]).toMatchObject({ ok: false, code: 'invalid_input' });
    // The second model call saw both results, the failure as an error text naming the field.
    const prompt = JSON.stringify(model.doGenerateCalls[1]!.prompt);
    expect(prompt).toContain('error-text');
    expect(prompt).toContain('/tool_input/page_size');
  });

  it('LangChain: structured tools, and an AIMessage’s tool calls turned into ToolMessages', async () => {
    const tools = await portico.tools.for(langchain, { identifier: user });
    for (const structured of tools) {
      expect(isStructuredTool(structured)).toBe(true);
      const openaiForm = convertToOpenAITool(structured);
      expectTopLevelAccepted(
        openaiForm.function.name,
        openaiForm.function.description,
        openaiForm.function.parameters as JsonSchema,
      );
    }
    const aiMessage = new AIMessage({
      content: '',
      tool_calls: [
        { id: 'lc_1', name: 'notes_data_fetch', args: { page_size: 1 }, type: 'tool_call' },
        { id: 'lc_2', name: 'notes_data_fetch', args: { page_size: 'ten' }, type: 'tool_call' },
      ],
    });
    const messages = await runToolCalls(tools, aiMessage);
    expect(messages.every((m) => m instanceof ToolMessage)).toBe(true);
    expect(messages.map((m) => [m.tool_call_id, m.status])).toEqual([
      ['lc_1', 'success'],
      ['lc_2', 'error'],
    ]);
    expect(JSON.parse(messages[0]!.content as string).results).toHaveLength(1);
    // LangChain's own check refused the input; the model still reads Portico's exact answer.
    expect(messages[1]!.content).toContain('/tool_input/page_size');
  });
});
