import { type SpawnOptions, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { sandboxAccount } from './helpers/flow.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';

// The Python SDK (packages/python) runs its pytest suite here against a real gateway and its
// sandbox on each store, so that it is part of `npm test`.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PYTHON_PKG = path.join(ROOT, 'packages/python');

const probe = spawnSync('python3', ['-c', 'import sys, pytest; assert sys.version_info >= (3, 9)'], {
  encoding: 'utf8',
});
const pythonMissing = probe.status !== 0 ? probe.stderr.trim() || 'python3 not found' : undefined;
if (pythonMissing && process.env.CI === 'true') {
  throw new Error(
    `python3 (3.9+) with pytest is required when CI=true (Debian: apt-get install python3-pytest): ${pythonMissing}`,
  );
}
if (pythonMissing) {
  console.warn(
    `[tests] python3 with pytest unavailable (${pythonMissing}); the Python SDK suite is skipped.`,
  );
}

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a process without blocking this one: the gateway under test answers in this process. */
function run(command: string, args: string[], options: SpawnOptions, timeoutMs = 300_000): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => {
      stdout += d;
    });
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

function pythonEnv(t: TestGateway): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? tmpdir(),
    CI: process.env.CI ?? '',
    PYTHONPATH: path.join(PYTHON_PKG, 'src'),
    PYTHONDONTWRITEBYTECODE: '1',
    PORTICO_ENV_URL: t.url,
    PORTICO_CLIENT_ID: t.clientId,
    PORTICO_CLIENT_SECRET: t.clientSecret,
  };
}

/** The ```python blocks of a Markdown file, but those marked `norun=…`. */
function pythonBlocks(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return [...text.matchAll(/^```python([^\n]*)\n([\s\S]*?)^```$/gm)]
    .filter((m) => !/\bnorun=/.test(m[1]!))
    .map((m) => m[2]!);
}

describe('Python SDK error classes', () => {
  it('are generated from the gateway problem codes, and the committed file is up to date', () => {
    const check = spawnSync(
      process.execPath,
      [path.join(PYTHON_PKG, 'scripts/generate-errors.js'), '--check'],
      {
        encoding: 'utf8',
      },
    );
    expect(check.status, check.stderr).toBe(0);
    // The check itself can fail: a class missing from the file is seen.
    const generated = readFileSync(path.join(PYTHON_PKG, 'src/portico/_errors_generated.py'), 'utf8');
    const codes = readFileSync(path.join(ROOT, 'packages/gateway/src/errors/problem.ts'), 'utf8');
    for (const [, code] of codes.matchAll(/^ {2}([a-z_]+): \{ status:/gm)) {
      expect(generated).toContain(`problem_code = "${code}"`);
    }
  });
});

/** A Python with mypy: `python3`, or Debian's own when `python3` is another installation. */
const mypyPython = ['python3', '/usr/bin/python3'].find(
  (python) => spawnSync(python, ['-m', 'mypy', '--version'], { encoding: 'utf8' }).status === 0,
);

describe('Python SDK types', () => {
  it.skipIf(mypyPython === undefined && process.env.CI !== 'true')(
    'pass mypy --strict for Python 3.9 (py.typed ships with the package)',
    { timeout: 180_000 },
    async () => {
      expect(
        mypyPython,
        'mypy is required when CI=true (Debian: apt-get install python3-mypy)',
      ).toBeDefined();
      const result = await run(
        mypyPython!,
        ['-m', 'mypy', '--strict', '--python-version', '3.9', '--cache-dir=/dev/null', 'src/portico'],
        { cwd: PYTHON_PKG, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir() } },
      );
      expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
      expect(readFileSync(path.join(PYTHON_PKG, 'src/portico/py.typed'), 'utf8')).toBe('');
    },
  );
});

describe.skipIf(pythonMissing !== undefined).each(BACKENDS)('Python SDK on $name', (backend) => {
  let t: TestGateway;

  beforeAll(async () => {
    t = await startTestGateway(backend);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('passes its pytest suite against the gateway and the sandbox', { timeout: 300_000 }, async () => {
    const result = await run('python3', ['-m', 'pytest', 'tests', '-q', '-p', 'no:cacheprovider'], {
      cwd: PYTHON_PKG,
      env: pythonEnv(t),
    });
    const output = `${result.stdout}\n${result.stderr}`;
    expect(result.status, output.slice(-6000)).toBe(0);
    // Every test ran: a gateway test that skipped would mean the suite never reached the gateway.
    expect(output).toMatch(/\d+ passed/);
    expect(output).not.toMatch(/skipped|failed|error/);
  });

  it("runs the package README's Python samples", { timeout: 120_000 }, async () => {
    await sandboxAccount(t, { provider: 'notion', identifier: 'user_42', connection: 'notion-sandbox' });
    const blocks = pythonBlocks('packages/python/README.md');
    expect(blocks.length).toBeGreaterThan(0);
    const dir = mkdtempSync(path.join(tmpdir(), 'portico-py-readme-'));
    try {
      for (const [index, code] of blocks.entries()) {
        const file = path.join(dir, `sample-${index}.py`);
        writeFileSync(file, code);
        const result = await run('python3', [file], { cwd: dir, env: pythonEnv(t) }, 60_000);
        expect(result.status, `block ${index}:\n${result.stdout}\n${result.stderr}`).toBe(0);
        // What a block's comments say it prints (`# → …`) must appear.
        for (const shown of code.matchAll(/# → (.*)$/gm)) {
          for (const part of shown[1]!.split('…').filter((p) => p.trim().length > 2)) {
            expect(result.stdout, `block ${index} prints ${part}`).toContain(part.trim());
          }
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
