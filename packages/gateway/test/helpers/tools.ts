import type { EmulatorControl, FaultSpec } from '@portico/emulators';
import { expect } from 'vitest';
import { executeTool, sandboxAccount } from './flow.js';
import type { TestGateway } from './gateway.js';

/** What POST /api/v1/tools/execute answered. */
export interface ToolResult {
  status: number;
  body: Record<string, unknown>;
}

export interface FieldError {
  path: string;
  message: string;
}

/** Which emulator routes to count: all of them, those whose key contains a string, or a predicate on the key. */
export type RouteFilter = string | ((route: string) => boolean);

/** The sandbox emulators the test gateway mounts. */
export function emulatorControl(t: TestGateway): EmulatorControl {
  const control = t.gateway.sandbox.control;
  if (!control) throw new Error('the test gateway mounts the sandbox emulators');
  return control;
}

/** Requests the emulators have answered so far (keys like "GET /notion/v1/users"), optionally of some routes only. */
export function upstreamRequests(control: EmulatorControl, route?: RouteFilter): number {
  const matches =
    route === undefined
      ? () => true
      : typeof route === 'string'
        ? (key: string) => key.includes(route)
        : route;
  return Object.entries(control.counters().requests)
    .filter(([key]) => matches(key))
    .reduce((sum, [, n]) => sum + n, 0);
}

/** Runs `action` and asserts it made no request to the emulators (on the routes of `route`). */
export async function expectNoUpstreamCall<T>(
  control: EmulatorControl,
  action: () => Promise<T>,
  route?: RouteFilter,
): Promise<T> {
  const before = upstreamRequests(control, route);
  const result = await action();
  expect(upstreamRequests(control, route), `no upstream request: ${JSON.stringify(result)}`).toBe(before);
  return result;
}

/**
 * Asserts a recorded 400 invalid_input with an error at every one of `paths`; `message`, when given, must
 * match the (first) error at one of those paths. Returns the body.
 */
export function expectInvalidInput(
  res: ToolResult,
  paths: string | string[],
  message?: RegExp | string,
): Record<string, unknown> {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.code).toBe('invalid_input');
  expect(res.body.execution_id).toMatch(/^exec_/);
  const errors = res.body.errors as FieldError[];
  const hits = (Array.isArray(paths) ? paths : [paths]).map((path) => {
    const hit = errors.find((e) => e.path === path);
    expect(hit, `no error at ${path}: ${JSON.stringify(errors)}`).toBeDefined();
    return hit!;
  });
  if (message !== undefined) {
    const matching = hits.filter((e) =>
      typeof message === 'string' ? e.message.includes(message) : message.test(e.message),
    );
    expect(matching, `${message} in ${JSON.stringify(hits)}`).not.toHaveLength(0);
  }
  return res.body;
}

/** A tool family's test harness: runs tools for one identifier and checks refusals made before any upstream call. */
export function toolHarness(opts: {
  gateway: () => TestGateway;
  identifier: string;
  /** The emulator routes the family calls (every route when omitted). */
  route?: RouteFilter;
}) {
  const control = () => emulatorControl(opts.gateway());
  const run = (tool_name: string, tool_input: unknown, identifier = opts.identifier): Promise<ToolResult> =>
    executeTool(opts.gateway(), { tool_name, identifier, tool_input });
  /** Runs a tool expecting 400 invalid_input at `paths` and proves no upstream request was made. */
  const expectInvalid = async (
    tool_name: string,
    tool_input: unknown,
    paths: string | string[],
    message?: RegExp | string,
  ) => {
    const res = await expectNoUpstreamCall(control(), () => run(tool_name, tool_input), opts.route);
    return expectInvalidInput(res, paths, message);
  };
  return { control, run, expectInvalid };
}

/**
 * GET /api/v1/tools?provider=… lists exactly `names`, each served with a strict, fully described input schema
 * and a description with an example call. Returns the listed tools.
 */
export async function expectProviderTools(t: TestGateway, provider: string, names: string[]) {
  const res = await t.api(`/api/v1/tools?provider=${provider}`);
  expect(res.status).toBe(200);
  const tools = (
    (await res.json()) as {
      data: Array<{ name: string; description: string; input_schema: Record<string, unknown> }>;
    }
  ).data.filter((tool) => !tool.name.startsWith(`${provider}_`));
  // The provider's compiled tools (named `<provider>_…`) are listed too; these are the specification's.
  expect(tools.map((tool) => tool.name).sort()).toEqual([...names].sort());
  for (const tool of tools) {
    expect(tool.input_schema, tool.name).toMatchObject({ type: 'object', additionalProperties: false });
    expect(tool.description, tool.name).toMatch(/Example: \{/);
    for (const [name, prop] of Object.entries(
      tool.input_schema.properties as Record<string, { description?: string }>,
    )) {
      expect(prop.description, `${tool.name}.${name}`).toEqual(expect.any(String));
      expect(prop.description, `${tool.name}.${name}`).toBeTruthy();
    }
  }
  return tools;
}

/** Asserts a provider error mapped to `code` with the gateway status `status` (and the provider's, if given). */
export function expectUpstreamError(
  res: ToolResult,
  expected: { status: number; code: string; upstreamStatus?: number; detail?: RegExp | string },
  label?: string,
): Record<string, unknown> {
  expect(res.status, label ?? JSON.stringify(res.body)).toBe(expected.status);
  expect(res.body.code, label).toBe(expected.code);
  if (expected.upstreamStatus !== undefined) {
    expect(res.body.upstream, label).toMatchObject({ status: expected.upstreamStatus });
  }
  if (expected.detail !== undefined) expect(String(res.body.detail), label).toMatch(expected.detail);
  return res.body;
}

/** The 404 a provider gives for an unknown object, mapped to upstream_not_found. */
export const notFound = (detail?: RegExp | string) => ({
  status: 404,
  code: 'upstream_not_found',
  upstreamStatus: 404,
  ...(detail === undefined ? {} : { detail }),
});

/** A Google API 429 with Retry-After. */
export function google429(path: string, retryAfterSeconds: number, message: string): FaultSpec {
  return {
    emulator: 'google',
    path,
    status: 429,
    headers: { 'retry-after': String(retryAfterSeconds) },
    body: { error: { code: 429, message, status: 'RESOURCE_EXHAUSTED' } },
  };
}

/** Google's other rate-limit answer: 403 with a usageLimits reason (no Retry-After). */
export function google403RateLimit(
  path: string,
  reason: 'rateLimitExceeded' | 'userRateLimitExceeded',
  message = 'Rate Limit Exceeded',
): FaultSpec {
  return {
    emulator: 'google',
    path,
    status: 403,
    body: { error: { code: 403, message, errors: [{ domain: 'usageLimits', reason, message }] } },
  };
}

/**
 * Injects `fault`, runs the tool and asserts a retryable upstream_rate_limited: with `retryAfterMs` when the
 * provider named a wait, otherwise with a positive wait the gateway chose. Returns the body.
 */
export async function expectRateLimited(
  control: EmulatorControl,
  run: () => Promise<ToolResult>,
  fault: FaultSpec,
  expected: { retryAfterMs?: number; detail?: RegExp | string } = {},
): Promise<Record<string, unknown>> {
  control.addFault(fault);
  const res = await run();
  expect(res.status, JSON.stringify(res.body)).toBe(429);
  expect(res.body).toMatchObject({ code: 'upstream_rate_limited', retryable: true });
  if (expected.retryAfterMs !== undefined) expect(res.body.retry_after_ms).toBe(expected.retryAfterMs);
  else expect(res.body.retry_after_ms).toBeGreaterThan(0);
  if (expected.detail !== undefined) expect(String(res.body.detail)).toMatch(expected.detail);
  return res.body;
}

type Call = [tool_name: string, tool_input: unknown];

/**
 * Connects `identifier` as emulated user `userId`, proves `works` succeeds, revokes the user's grant at the
 * provider (and whatever else `revoke` does), then asserts `fails` (by default the same call) answers 409
 * account_not_active with a fresh authorization link. Returns that body.
 */
export async function expectRevokedAccountNotActive(
  t: TestGateway,
  opts: {
    provider: string;
    emulator: Parameters<EmulatorControl['revokeGrants']>[0];
    identifier: string;
    userId: string;
    works: Call;
    fails?: Call;
    revoke?: (control: EmulatorControl) => void;
  },
): Promise<Record<string, unknown>> {
  const control = emulatorControl(t);
  await sandboxAccount(t, { provider: opts.provider, identifier: opts.identifier, userId: opts.userId });
  const run = ([tool_name, tool_input]: Call) =>
    executeTool(t, { tool_name, identifier: opts.identifier, tool_input });
  const ok = await run(opts.works);
  expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  control.revokeGrants(opts.emulator, { userId: opts.userId });
  opts.revoke?.(control);
  const res = await run(opts.fails ?? opts.works);
  expect(res.status, JSON.stringify(res.body)).toBe(409);
  expect(res.body).toMatchObject({
    code: 'account_not_active',
    authorization_link: { link: expect.stringContaining(`${t.url}/connect/`) },
  });
  return res.body;
}
