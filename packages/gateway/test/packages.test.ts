import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const run = promisify(execFile);
// npm's own range matcher (installed with the tool chain; no types of its own here).
const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean;
};
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const PACKAGES = ['sdk', 'emulators', 'gateway'] as const;
/** The oldest Node.js the published packages promise (undici 7 needs 20.18.1). */
const OLDEST_NODE = '20.18.1';
/** The oldest Node.js a checkout (its tool chain: vite under vitest) promises. */
const OLDEST_NODE_CHECKOUT = '20.19.0';

interface Packed {
  filename: string;
  files: Array<{ path: string }>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const readJson = async <T>(file: string) => JSON.parse(await readFile(file, 'utf8')) as T;

describe('the published packages', () => {
  let work: string;
  const tarballs = new Map<string, Packed>();

  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('declare what a registry needs and are not private', async () => {
    const rootLicense = await readFile(path.join(ROOT, 'LICENSE'), 'utf8');
    for (const name of PACKAGES) {
      const dir = path.join(ROOT, 'packages', name);
      const pkg = await readJson<Record<string, unknown>>(path.join(dir, 'package.json'));
      expect(pkg.name).toBe(`@portico/${name}`);
      expect(pkg.private, name).toBeUndefined();
      expect(pkg.license).toBe('Apache-2.0');
      expect(pkg).toMatchObject({
        repository: { type: 'git', directory: `packages/${name}` },
        engines: { node: `>=${OLDEST_NODE}` },
        publishConfig: { access: 'public', provenance: true },
      });
      expect(pkg.files).toEqual(expect.arrayContaining(['dist', 'README.md', 'LICENSE']));
      // The package's LICENSE is the repository's, word for word.
      expect(await readFile(path.join(dir, 'LICENSE'), 'utf8')).toBe(rootLicense);
    }
    const gateway = await readJson<{ bin: Record<string, string>; dependencies: Record<string, string> }>(
      path.join(ROOT, 'packages/gateway/package.json'),
    );
    expect(gateway.bin).toEqual({ portico: './bin/portico.js' });
    // The sandbox runs the emulators in-process: they are a dependency, published alongside.
    expect(Object.keys(gateway.dependencies)).toEqual(
      expect.arrayContaining(['@portico/emulators', '@portico/sdk']),
    );
  });

  it('pack into tarballs with README, LICENSE, types and source maps whose sources are inside', async () => {
    work = await mkdtemp(path.join(tmpdir(), 'portico-packages-'));
    for (const name of PACKAGES) {
      const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], {
        cwd: path.join(ROOT, 'packages', name),
        maxBuffer: 64 * 1024 * 1024,
      });
      const [packed] = JSON.parse(stdout) as Packed[];
      tarballs.set(name, packed!);
      const files = new Set(packed!.files.map((f) => f.path));
      for (const required of ['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts']) {
        expect(files.has(required), `${name}: ${required}`).toBe(true);
      }
      expect([...files].filter((f) => f.includes('.test.') || f.endsWith('.tsbuildinfo'))).toEqual([]);
      const dangling: string[] = [];
      for (const map of [...files].filter((f) => f.endsWith('.map'))) {
        const { sources } = await readJson<{ sources: string[] }>(path.join(ROOT, 'packages', name, map));
        for (const source of sources) {
          const target = path.posix.normalize(path.posix.join(path.posix.dirname(map), source));
          if (!files.has(target)) dangling.push(`${map} → ${source}`);
        }
      }
      expect(dangling, name).toEqual([]);
    }
    expect(tarballs.get('gateway')!.files.map((f) => f.path)).toEqual(
      expect.arrayContaining([
        'bin/portico.js',
        'dist/cli.js',
        'providers/notion.json',
        'dashboard-ui/index.html',
      ]),
    );
  }, 120_000);

  it('install into a fresh project, where `portico start` serves the sandbox and the packed SDK calls a tool', async () => {
    expect(tarballs.size).toBe(PACKAGES.length);
    const project = path.join(work, 'project');
    await run('mkdir', ['-p', project]);
    await writeFile(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'fresh', private: true, type: 'module' }),
    );
    // The packages' dependencies come from the registry (or npm's cache of it), as for a user.
    await run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        ...PACKAGES.map((name) => path.join(work, tarballs.get(name)!.filename)),
      ],
      { cwd: project, maxBuffer: 64 * 1024 * 1024 },
    );

    const key = await run(path.join(project, 'node_modules/.bin/portico'), ['keys', 'generate'], {
      cwd: project,
    });
    expect(Buffer.from(key.stdout.trim(), 'base64')).toHaveLength(32);

    const port = await freePort();
    const child = spawn(path.join(project, 'node_modules/.bin/portico'), ['start'], {
      cwd: project,
      env: {
        PATH: process.env.PATH ?? '',
        PORTICO_PORT: String(port),
        PORTICO_HOST: '127.0.0.1',
        // Links and redirect URIs must name the real port.
        PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}`,
      },
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`portico start did not get ready:\n${out}`)), 60_000);
        const check = () => {
          const match = /"url":"(http:\/\/[^"]+)".*"msg":"Portico is ready"/.exec(out);
          if (match) {
            clearTimeout(timer);
            child.stdout.off('data', check);
            resolve(match[1]!);
          }
        };
        child.stdout.on('data', check);
        void exited.then(() => reject(new Error(`portico start exited:\n${out}`)));
      });
      const clientId = /client_id:\s+(\S+)/.exec(out)?.[1];
      const clientSecret = /client_secret:\s+(\S+)/.exec(out)?.[1];
      expect(clientId).toMatch(/^cli_/);
      expect(clientSecret).toBeDefined();
      // The embedded store lives in the project's own ./.portico.
      expect(out).toMatch(/"database":"pglite"/);

      // The quick start, through the packed SDK: a sandbox connection, the end user's consent
      // (played by the emulators' helper, as a browser would), then a tool call as that user.
      await writeFile(
        path.join(project, 'quick-start.mjs'),
        `import { submitConsent } from '@portico/emulators';
import { Portico } from '@portico/sdk';

const portico = new Portico({ envUrl: process.argv[2], clientId: process.argv[3], clientSecret: process.argv[4] });
await portico.connections.create({ name: 'notion-sandbox', provider: 'notion', sandbox: true });
const { link } = await portico.getAuthorizationLink({ connectionName: 'notion-sandbox', identifier: 'user_42' });
const landing = await (await fetch(link)).text();
const action = /<form method="post" action="([^"]+)"/.exec(landing)[1].replaceAll('&#47;', '/');
const start = await fetch(new URL(action, link), { method: 'POST', redirect: 'manual' });
const callback = await submitConsent(start.headers.get('location'), { decision: 'allow' });
const cookie = start.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
const back = await fetch(callback, { redirect: 'manual', headers: { cookie } });
if (back.status >= 400) throw new Error('consent failed: ' + back.status);
const result = await portico.tools.execute({
  toolName: 'notes_data_fetch',
  identifier: 'user_42',
  toolInput: { query: 'roadmap' },
});
console.log(JSON.stringify({ executionId: result.executionId, data: result.data }));
`,
      );
      const quick = await run(process.execPath, ['quick-start.mjs', url, clientId!, clientSecret!], {
        cwd: project,
      });
      const outcome = JSON.parse(quick.stdout) as { executionId?: string; data?: unknown };
      expect(outcome.executionId).toMatch(/\w/);
      expect(outcome.data).toBeTypeOf('object');
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  }, 180_000);
});

describe('the dependency tree', () => {
  it('promises nothing about Node.js that a dependency breaks', async () => {
    const lock = await readJson<{
      packages: Record<
        string,
        { engines?: { node?: string } | string[]; dev?: boolean; optional?: boolean; devOptional?: boolean }
      >;
    }>(path.join(ROOT, 'package-lock.json'));
    expect(lock.packages['']).toMatchObject({ engines: { node: `>=${OLDEST_NODE_CHECKOUT.slice(0, -2)}` } });
    const refusing = Object.entries(lock.packages)
      // Optional packages (platform binaries) are skipped by npm where they cannot run.
      .filter(([name, entry]) => name.includes('node_modules/') && !entry.optional)
      .flatMap(([name, entry]) => {
        const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
        // What users install needs the packages' floor; the checkout's tools, the checkout's.
        const oldest = entry.dev || entry.devOptional ? OLDEST_NODE_CHECKOUT : OLDEST_NODE;
        if (!range || semver.satisfies(oldest, range)) return [];
        return [`${name.split('node_modules/').pop()} requires node ${range}, not ${oldest}`];
      });
    expect(refusing).toEqual([]);
  });
});

describe('the release workflow', () => {
  it('publishes the packages with provenance and pushes an attested image on a v* tag', async () => {
    const workflow = parse(await readFile(path.join(ROOT, '.github/workflows/release.yml'), 'utf8')) as {
      on: { push: { tags: string[] } };
      permissions?: Record<string, string>;
      jobs: Record<string, { permissions?: Record<string, string>; steps: Array<Record<string, unknown>> }>;
    };
    expect(workflow.on.push.tags).toEqual(['v*']);
    const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);
    const runs = steps.map((s) => String(s.run ?? '')).join('\n');
    for (const name of PACKAGES) {
      expect(runs).toMatch(new RegExp(`npm publish[^\\n]*--provenance[^\\n]*packages/${name}`));
    }
    // Dependencies before dependants: the gateway's exact versions must already be on the registry.
    expect(runs.indexOf('packages/gateway')).toBeGreaterThan(runs.indexOf('packages/emulators'));
    expect(runs).toMatch(/npm ci/);
    expect(runs).toMatch(/npm test|npx vitest run|npm run build/);
    const build = steps.find((s) => String(s.uses ?? '').startsWith('docker/build-push-action@'));
    expect(build).toBeDefined();
    expect(build!.with).toMatchObject({ push: true, provenance: 'mode=max', sbom: true });
    const permissions = Object.values(workflow.jobs).map(
      (job) => job.permissions ?? workflow.permissions ?? {},
    );
    expect(permissions.some((p) => p['id-token'] === 'write')).toBe(true);
    expect(permissions.some((p) => p.packages === 'write')).toBe(true);
  });
});
