import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { type ConformanceSuite, installConformanceSuite } from './helpers/mcp-conformance-suite.js';

const run = promisify(execFile);

/**
 * The official MCP conformance suite, pinned per protocol revision: the stable release for
 * 2025-11-25, the alpha (the only release that knows it) for 2026-07-28; each installed once,
 * with the Node 22 its CLI needs (helpers/mcp-conformance-suite.ts).
 */
const RUNS = [
  {
    revision: '2025-11-25',
    suite: '@modelcontextprotocol/conformance@0.1.16',
    select: ['--spec-version', '2025-11-25'],
  },
  {
    revision: '2026-07-28',
    suite: '@modelcontextprotocol/conformance@0.2.0-alpha.12',
    // Exactly the scenarios the revision requires, frozen at its release, at its wire.
    select: ['--requirements', '2026-07-28'],
  },
] as const;
const BASELINE = fileURLToPath(new URL('./mcp-conformance-baseline.yml', import.meta.url));
const IDENTIFIER = 'conformance@example.com';

interface BaselineEntry {
  scenario: string;
  reason: string;
  /** The revisions it is expected to fail on (default: every revision that runs it). */
  revisions?: string[];
  /**
   * The scenario's checks expected to fail (default: any): a scenario whose other checks test
   * what Portico does offer keeps guarding them.
   */
  checks?: string[];
}

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

/**
 * The suite's server scenarios send no credential, so they reach the gateway through this loopback
 * relay, which adds the end user's MCP token to requests that carry none and passes everything
 * else (Host and Origin included, for the DNS-rebinding scenario) untouched, streams both ways.
 */
async function credentialRelay(
  target: string,
  token: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  // A connection each way per request: pooled upstream sockets, or the gateway's keep-alive hints
  // passed on to the suite's client, would let one side reuse a socket the other has closed.
  const hopByHop = (headers: http.IncomingHttpHeaders) => {
    const { connection: _c, 'keep-alive': _k, ...rest } = headers;
    return rest;
  };
  const server = http.createServer((req, res) => {
    const headers = hopByHop(req.headers);
    headers.authorization ??= `Bearer ${token}`;
    const forward = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers,
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, hopByHop(answer.headers));
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://localhost:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The dated protocol revisions the suite has server scenarios for, newest last. */
function revisionsOf(listing: string): string[] {
  const server = listing.split(/Client scenarios/)[0] ?? '';
  const dates = new Set<string>();
  for (const [, versions] of server.matchAll(/\[([^\]]+)\]/g)) {
    for (const version of versions!.split(','))
      if (/^\d{4}-\d{2}-\d{2}$/.test(version.trim())) dates.add(version.trim());
  }
  return [...dates].sort();
}

/** Each scenario's checks from a run's output folder (one `server-<scenario>-<time>` folder each). */
function resultsIn(dir: string): Map<string, Check[]> {
  const results = new Map<string, Check[]>();
  for (const entry of readdirSync(dir)) {
    const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
    results.set(scenario, JSON.parse(readFileSync(path.join(dir, entry, 'checks.json'), 'utf8')) as Check[]);
  }
  return results;
}

/** As the suite judges a scenario: any failed check, or any warning, fails it. */
const failedChecks = (checks: Check[]) =>
  checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');

describe('the official MCP conformance suite against a real gateway', () => {
  let t: TestGateway;
  let relay: Awaited<ReturnType<typeof credentialRelay>>;
  let suites: ConformanceSuite[];
  /** The two latest dated revisions the newest suite has server scenarios for. */
  let latest: string[];
  /** Every scenario the runs ran, for baseline entries that no longer name one. */
  const ran = new Set<string>();
  const baseline = new Map(
    (parse(readFileSync(BASELINE, 'utf8')) as { server: BaselineEntry[] }).server.map((e) => [e.scenario, e]),
  );
  /** The baseline entry that covers a scenario on a revision, if any. */
  const entryFor = (scenario: string, revision: string) => {
    const entry = baseline.get(scenario);
    return entry && (entry.revisions?.includes(revision) ?? true) ? entry : undefined;
  };

  beforeAll(async () => {
    let gateway: TestGateway;
    [gateway, ...suites] = await Promise.all([
      startTestGateway(BACKENDS[0]!),
      ...RUNS.map((r) => installConformanceSuite(r.suite)),
    ]);
    t = gateway;
    await sandboxAccount(t, { provider: 'notion', identifier: IDENTIFIER, connection: 'notes' });
    const minted = await t.api('/api/v1/mcp/tokens', { method: 'POST', json: { identifier: IDENTIFIER } });
    expect(minted.status).toBe(201);
    relay = await credentialRelay(t.url, ((await minted.json()) as { token: string }).token);
    const newest = suites[suites.length - 1]!;
    const { stdout } = await run(newest.node, [newest.cli, 'list', '--server']);
    latest = revisionsOf(stdout).slice(-2);
  }, 300_000);

  afterAll(async () => {
    await relay?.close();
    await t?.close();
  });

  it('runs the two latest dated revisions the suite knows', () => {
    expect(latest).toEqual(RUNS.map((r) => r.revision));
  });

  it('every baseline entry names a reason, and only revisions it runs', () => {
    for (const entry of baseline.values()) {
      expect(entry.reason, entry.scenario).toMatch(/\w{3,}/);
      for (const revision of entry.revisions ?? []) {
        expect(
          RUNS.map((r) => r.revision),
          entry.scenario,
        ).toContain(revision);
      }
    }
  });

  RUNS.forEach(({ revision, select }, index) => {
    it(`passes the server scenarios of ${revision}, but the baseline's`, async () => {
      const suite = suites[index]!;
      const out = mkdtempSync(path.join(os.tmpdir(), 'portico-mcp-conformance-run-'));
      try {
        await run(
          suite.node,
          [suite.cli, 'server', '--url', `${relay.url}/mcp`, ...select, '--output-dir', out],
          { timeout: 150_000, maxBuffer: 64 * 1024 * 1024 },
        ).catch((error: { code?: unknown }) => {
          // Exit 1 is "a scenario failed", judged below; anything else is the suite breaking.
          if (error.code !== 1) throw error;
        });
        const results = resultsIn(out);
        expect(results.size, 'scenarios run').toBeGreaterThan(10);
        const unexpected: string[] = [];
        const nowPassing: string[] = [];
        for (const [scenario, checks] of results) {
          ran.add(scenario);
          const entry = entryFor(scenario, revision);
          const failed = failedChecks(checks);
          const outside = entry?.checks
            ? failed.filter((c) => !entry.checks!.includes(c.id))
            : entry
              ? []
              : failed;
          if (outside.length) {
            unexpected.push(
              `${scenario}: ${outside.map((c) => `${c.id} ${c.status}${c.errorMessage ? ` (${c.errorMessage})` : ''}`).join('; ')}`,
            );
          }
          if (entry?.checks) {
            for (const id of entry.checks) {
              if (!failed.some((c) => c.id === id)) nowPassing.push(`${scenario} ${id}`);
            }
          } else if (entry && !failed.length) nowPassing.push(scenario);
        }
        // Both lists at once: a failure outside the baseline, and a baseline entry that now passes
        // (the baseline stays honest), each fail the run.
        expect({ failingOutsideBaseline: unexpected, passingButInBaseline: nowPassing }, revision).toEqual({
          failingOutsideBaseline: [],
          passingButInBaseline: [],
        });
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    }, 160_000);
  });

  it('names in its baseline only scenarios the suite still runs', () => {
    expect(ran.size).toBeGreaterThan(0);
    expect([...baseline.keys()].filter((scenario) => !ran.has(scenario))).toEqual([]);
  });
});
