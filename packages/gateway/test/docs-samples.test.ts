import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { submitConsent } from '@portico/emulators';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { BACKENDS } from './helpers/backends.js';
import { browserCookie, openLink, sandboxAccount } from './helpers/flow.js';
import { freePort, startTestGateway, type TestGateway } from './helpers/gateway.js';

// Every command and code sample of the README and the guides runs here against a real gateway
// with its sandbox, so the documentation cannot drift from the product. A file's shell blocks
// run in order and share their variables, as they would in one terminal.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
// Inside the repository so that `npx portico` and `import '@portico/sdk'` resolve as in a checkout.
const WORK = path.join(ROOT, 'node_modules/.cache/docs-samples');

// Generated pages, the specification, and pages whose samples other suites run.
const SKIPPED = new Set([
  // The lead's page: each section names the suite that runs its code (*-sdk-*.test.ts, proxy-tokens).
  'docs/guides/provider-sdks.md',
]);
const SKIPPED_DIRS = ['docs/providers/', 'docs/tools/', 'docs/spec/'];

/**
 * Blocks that cannot run here, by the id in their info string (```sh norun=id). The reason is
 * said next to each block in the docs; a new one must be added here on purpose.
 */
const NORUN = new Set([
  'install', // npm ci / npm start: the suite itself runs on the installed, built checkout
  'test-suite', // npm test would run this suite inside itself
  'container', // docker build / docker compose: no container engine in the test run
  'postgres-start', // a PostgreSQL host and a second server process
  'proxy-port-start', // starts a second server; the harness starts the gateway with PORTICO_PROXY_PORT
  'webhook-receiver', // the Express receiver needs the standardwebhooks package; the page's own receiver runs instead
  'llm-call', // calls a model provider's API with an API key
  'vendor-server', // reaches a vendor's own server on the internet; remote-mcp.test.ts runs the same against emulated ones
  'emulator-start', // a long-running emulator server; remote-mcp.test.ts starts the same emulators
]);

// Generous: the CLI page runs some forty commands of a second each, slower on a busy machine.
const BLOCK_TIMEOUT_MS = 300_000;
const PAGE_TIMEOUT_MS = 600_000;

interface Block {
  file: string;
  line: number;
  lang: string;
  attrs: Map<string, string>;
  code: string;
}

function markdownFiles(): string[] {
  const out = ['README.md'];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.md')) out.push(rel);
    }
  };
  walk('docs');
  return out.filter((f) => !SKIPPED.has(f) && !SKIPPED_DIRS.some((d) => f.startsWith(d))).sort();
}

/** Fenced blocks, including those indented inside list items. */
function parseBlocks(file: string, text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const [lang = '', ...rest] = info!.trim().split(/\s+/);
    const attrs = new Map(rest.map((a) => [a.split('=')[0]!, a.split('=')[1] ?? ''] as [string, string]));
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      if (lines[j]!.trim() === fence) break;
      body.push(lines[j]!.startsWith(indent!) ? lines[j]!.slice(indent!.length) : lines[j]!);
    }
    blocks.push({ file, line: i + 1, lang: lang.toLowerCase(), attrs, code: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** The workspace's Python packages (a `src/` layout under packages/), importable as installed. */
function pythonPath(): string {
  const roots: string[] = [];
  for (const pkg of readdirSync(path.join(ROOT, 'packages'))) {
    const src = path.join(ROOT, 'packages', pkg, 'src');
    if (!existsSync(src)) continue;
    const hasModule = readdirSync(src, { withFileTypes: true }).some(
      (e) => e.isDirectory() && existsSync(path.join(src, e.name, '__init__.py')),
    );
    if (hasModule) roots.push(src);
  }
  return roots.join(':');
}

/** GitHub's anchor for a heading. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const SHELL = new Set(['sh', 'bash', 'shell']);
const SCRIPT = new Set(['ts', 'typescript', 'js', 'javascript', 'mjs']);
const PYTHON = new Set(['python', 'py']);
// Output shown to the reader, diagrams and file layouts: not commands.
const NOT_SAMPLES = new Set(['', 'text', 'console', 'mermaid', 'http']);

/** The gateway variables a page's samples need: `<!-- docs-samples: env NAME=VALUE -->`. */
function gatewayEnvOf(text: string): Record<string, string> {
  return Object.fromEntries(
    [...text.matchAll(/<!-- docs-samples: env (\w+)=(\S+) -->/g)].map((m) => [m[1]!, m[2]!]),
  );
}

/** The setup a page declares for its samples: `<!-- docs-samples: account CONNECTION PROVIDER IDENTIFIER -->`. */
function setupOf(text: string): { connection: string; provider: string; identifier: string }[] {
  return [...text.matchAll(/<!-- docs-samples: account (\S+) (\S+) (\S+) -->/g)].map((m) => ({
    connection: m[1]!,
    provider: m[2]!,
    identifier: m[3]!,
  }));
}

/**
 * JSON shown in a `# …` comment after a command: its keys, and its string values that are not
 * elided with "…", must be in what the block printed.
 */
function expectedFragments(code: string): string[] {
  const out: string[] = [];
  for (const line of code.split('\n')) {
    const comment = /(?:^|\s)#\s*(?:\d{3}\s+)?([{[].*)$/.exec(line)?.[1];
    if (!comment || !/"\w+"\s*:/.test(comment)) continue;
    const squeezed = comment.replace(/\s+/g, '');
    for (const m of squeezed.matchAll(/"(\w+)":("[^"…]*"|true|false|null)?/g)) {
      out.push(m[2] && !m[2].includes('…') ? `"${m[1]}":${m[2]}` : `"${m[1]}":`);
    }
  }
  return [...new Set(out)];
}

/** What a script's `// → …` (Python: `# → …`) comments say it prints: each part between ellipses, in its output. */
function printedFragments(code: string): string[] {
  return code
    .split('\n')
    .flatMap((line) => {
      const shown = /(?:\/\/|#) → (.*)$/.exec(line)?.[1];
      return shown ? shown.split('…') : [];
    })
    .map((part) => part.replace(/\s+/g, ''))
    .filter((part) => part.length > 2);
}

function substitute(
  code: string,
  t: TestGateway,
  proxyPort: number,
  receiverPort: number,
  seen: Map<string, string>,
): string {
  const { host } = new URL(t.url);
  let out = code;
  // Values the reader copies from a browser's address bar (an auth_request_id after a consent).
  for (const [placeholder, value] of seen) out = out.replaceAll(placeholder, value);
  return (
    out
      .replaceAll('http://localhost:8080', t.url)
      .replaceAll('localhost:8080', host)
      .replaceAll('http://localhost:8081', `http://127.0.0.1:${proxyPort}`)
      .replaceAll('localhost:8081', `127.0.0.1:${proxyPort}`)
      .replaceAll('localhost:3000', `127.0.0.1:${receiverPort}`)
      .replaceAll('cli_…', t.clientId)
      .replaceAll('pcs_…', t.clientSecret)
      // The reader's clone of Portico: this checkout.
      .replaceAll('~/portico', ROOT.replace(/\/$/, ''))
  );
}

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a process without blocking this one: the gateway under test answers in this process. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/**
 * Starts a ```js background block (a server the next blocks talk to) and resolves once it has
 * printed its first line, i.e. it listens.
 */
async function startBackground(
  block: Block,
  code: string,
  dir: string,
  env: Record<string, string>,
  index: number,
): Promise<{ child: ChildProcess; output: () => string }> {
  const js = ts.transpileModule(code, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const sample = path.join(dir, `sample-${index}.mjs`);
  writeFileSync(sample, js);
  const child = spawn(
    'bash',
    ['-c', `[ -f .state ] && source .state; exec "${process.execPath}" ${sample}`],
    {
      cwd: dir,
      env,
    },
  );
  let output = '';
  child.stderr.on('data', (d) => {
    output += d;
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${block.file}:${block.line} printed nothing in 30 s`)),
      30_000,
    );
    child.stdout.on('data', (d) => {
      output += d;
      clearTimeout(timer);
      resolve();
    });
    child.on('exit', (status) => {
      clearTimeout(timer);
      reject(new Error(`${block.file}:${block.line} exited ${status} before listening:\n${output}`));
    });
  });
  return { child, output: () => output };
}

function shellWrapper(code: string, state: string, allowHttpErrors: boolean): string {
  return [
    '__base="$(compgen -v)"',
    `[ -f '${state}' ] && source '${state}'`,
    'set -euo pipefail',
    // A sample that gets an HTTP error did not do what it says, unless it says so.
    allowHttpErrors ? '' : 'curl() { command curl --fail-with-body "$@"; }',
    // The bin `npx portico` resolves to in a checkout, without npm's own second of start-up.
    `npx() { if [ "$1" = portico ]; then shift; '${path.join(ROOT, 'node_modules/.bin/portico')}' "$@"; else command npx "$@"; fi; }`,
    code,
    'set +eu',
    `for __v in $(compgen -v); do case $'\\n'"$__base"$'\\n' in *$'\\n'"$__v"$'\\n'*) continue;; esac; case $__v in __*) continue;; esac; declare -p "$__v"; done > '${state}.next' 2>/dev/null`,
    // Functions a block defines are the reader's too (the harness's curl wrapper is not).
    `for __f in $(compgen -A function); do case $__f in curl|npx|__*) continue;; esac; declare -f "$__f"; done >> '${state}.next'`,
    `mv '${state}.next' '${state}'`,
  ].join('\n');
}

function stateVar(state: string, name: string): string {
  const r = spawnSync('bash', ['-c', `source '${state}' 2>/dev/null; printf %s "\${${name}:-}"`], {
    encoding: 'utf8',
  });
  return r.stdout;
}

/** Plays the end user on a sandbox link: opens it, allows on the emulator's consent page. */
async function consent(link: string): Promise<URL | undefined> {
  const start = await openLink(link);
  expect(start.status, `opening ${link}`).toBe(303);
  const callbackUrl = await submitConsent(start.headers.get('location')!, { decision: 'allow' });
  const done = await fetch(callbackUrl, { redirect: 'manual', headers: { cookie: browserCookie(start) } });
  expect([200, 302, 303], `the callback of ${link}`).toContain(done.status);
  const location = done.headers.get('location');
  return location ? new URL(location) : undefined;
}

const files = markdownFiles();
const parsed = files.map((file) => {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  return { file, text, blocks: parseBlocks(file, text) };
});

describe('documentation samples', () => {
  it('marks only the listed blocks as not runnable, each with a known reason', () => {
    const marked = parsed.flatMap((p) => p.blocks.filter((b) => b.attrs.has('norun')));
    for (const b of marked)
      expect(NORUN.has(b.attrs.get('norun')!), `${b.file}:${b.line} norun=${b.attrs.get('norun')}`).toBe(
        true,
      );
    // A handful of blocks, not a way out: most samples must run.
    const all = parsed.flatMap((p) => p.blocks.filter((b) => !NOT_SAMPLES.has(b.lang)));
    expect(marked.length).toBeLessThanOrEqual(12);
    // The list holds no stale reasons either.
    for (const id of NORUN)
      expect(
        marked.some((b) => b.attrs.get('norun') === id),
        `norun=${id} is listed but no block uses it`,
      ).toBe(true);
    expect(all.length - marked.length).toBeGreaterThan(marked.length * 4);
  });

  it('names a language for every sample it can run', () => {
    for (const { blocks } of parsed)
      for (const b of blocks) {
        const known =
          SHELL.has(b.lang) ||
          SCRIPT.has(b.lang) ||
          PYTHON.has(b.lang) ||
          b.lang === 'json' ||
          NOT_SAMPLES.has(b.lang);
        expect(known, `${b.file}:${b.line} \`\`\`${b.lang}`).toBe(true);
      }
  });

  it('parses every JSON sample', () => {
    for (const { blocks } of parsed)
      for (const b of blocks.filter((x) => x.lang === 'json'))
        expect(() => JSON.parse(b.code), `${b.file}:${b.line}`).not.toThrow();
  });

  it('links only to files and headings that exist', () => {
    for (const { file, text } of parsed) {
      const prose = text.replace(/^\s*`{3,}[\s\S]*?^\s*`{3,}\s*$/gm, '');
      for (const [, target] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^(https?:|mailto:)/.test(target!)) continue;
        const [filePart, anchor] = target!.split('#') as [string, string | undefined];
        const resolved = filePart
          ? path.join(path.dirname(path.join(ROOT, file)), filePart)
          : path.join(ROOT, file);
        expect(existsSync(resolved), `${file} links to ${target}`).toBe(true);
        if (anchor && resolved.endsWith('.md')) {
          const headings = readFileSync(resolved, 'utf8')
            .split('\n')
            .filter((l) => /^#{1,6} /.test(l))
            .map((l) => slug(l.replace(/^#+ /, '')));
          expect(headings, `${file} links to ${target}`).toContain(anchor);
        }
      }
    }
  });

  // A reader pastes the SDK guide into a TypeScript project: it must type-check as strictly as one.
  it('type-checks the SDK guide’s TypeScript under --strict', () => {
    const page = parsed.find((p) => p.file === 'docs/interfaces/sdk.md')!;
    const dir = path.join(WORK, 'tsc-strict');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const samples = page.blocks
      .filter((b) => b.lang === 'ts' || b.lang === 'typescript')
      .map((b, i) => {
        const file = path.join(dir, `sample-${i}.mts`);
        writeFileSync(file, b.code);
        return file;
      });
    expect(samples.length).toBeGreaterThan(0);
    const program = ts.createProgram(samples, {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ['node'],
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    rmSync(dir, { recursive: true, force: true });
    expect(problems).toEqual([]);
  });

  const tools = spawnSync('bash', ['-c', 'command -v curl && command -v jq'], { encoding: 'utf8' });
  it('has curl and jq, which the samples use', () => {
    expect(tools.status, 'install curl and jq').toBe(0);
  });

  for (const { file, text, blocks } of parsed) {
    const runnable = blocks.filter(
      (b) => !b.attrs.has('norun') && (SHELL.has(b.lang) || SCRIPT.has(b.lang) || PYTHON.has(b.lang)),
    );
    if (runnable.length === 0) continue;
    it(`runs the samples of ${file}`, { timeout: PAGE_TIMEOUT_MS }, async () => {
      const proxyPort = await freePort();
      // A gateway of its own per page: each page's samples start from an empty environment.
      const t = await startTestGateway(BACKENDS[0]!, {
        PORTICO_PROXY_PORT: String(proxyPort),
        ...gatewayEnvOf(text),
      });
      try {
        await runPage(t, proxyPort, file, text, runnable);
      } finally {
        await t.close();
      }
    });
  }
});

/** Runs a page's blocks in order against `t`, as a reader would in one terminal. */
async function runPage(t: TestGateway, proxyPort: number, file: string, text: string, runnable: Block[]) {
  for (const account of setupOf(text)) await sandboxAccount(t, account);
  const dir = path.join(WORK, file.replaceAll('/', '_'));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const state = path.join(dir, '.state');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dir,
    // Operator commands open an embedded store of their own here, never the checkout's.
    PORTICO_DATA_DIR: path.join(dir, '.portico'),
    // mktemp in a sample makes its scratch files here, removed with the page's directory.
    TMPDIR: dir,
    PORTICO_LOG_LEVEL: 'warn',
    PORTICO_PORT: new URL(t.url).port,
    PORTICO_ENV_URL: t.url,
    PORTICO_CLIENT_ID: t.clientId,
    PORTICO_CLIENT_SECRET: t.clientSecret,
    TOKEN: await t.token(),
    npm_config_update_notifier: 'false',
    // A sample must never install anything from the registry.
    npm_config_offline: 'true',
  };
  const seen = new Map<string, string>();
  // A sample's own server (a webhook receiver) listens here; `localhost:3000` in a page means it.
  const receiverPort = await freePort();
  env.PORT = String(receiverPort);
  const background: { where: string; code: string; child: ChildProcess; output: () => string }[] = [];
  for (const [index, block] of runnable.entries()) {
    const where = `${file}:${block.line}`;
    const code = substitute(block.code, t, proxyPort, receiverPort, seen);
    if (block.attrs.has('background')) {
      background.push({ where, code, ...(await startBackground(block, code, dir, env, index)) });
      continue;
    }
    let result: Ran;
    if (SHELL.has(block.lang)) {
      const script = shellWrapper(code, state, block.attrs.has('http-errors'));
      result = await run('bash', ['-c', script], { cwd: dir, env, timeoutMs: BLOCK_TIMEOUT_MS });
    } else if (PYTHON.has(block.lang)) {
      const sample = path.join(dir, `sample-${index}.py`);
      writeFileSync(sample, code);
      result = await run('bash', ['-c', `[ -f .state ] && source .state; exec python3 ${sample}`], {
        cwd: dir,
        env: { ...env, PYTHONPATH: pythonPath() },
        timeoutMs: BLOCK_TIMEOUT_MS,
      });
    } else {
      const js = ts.transpileModule(code, {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      }).outputText;
      const sample = path.join(dir, `sample-${index}.mjs`);
      writeFileSync(sample, js);
      // Run from the page's shell state, so a script sees what the blocks before it exported.
      result = await run(
        'bash',
        ['-c', `[ -f .state ] && source .state; exec "${process.execPath}" ${sample}`],
        {
          cwd: dir,
          env,
          timeoutMs: BLOCK_TIMEOUT_MS,
        },
      );
    }
    const output = result.stdout;
    const tail = (text: string) => text.slice(-3000);
    expect(result.status, `${where} exited ${result.status}:\n${tail(output)}\n${tail(result.stderr)}`).toBe(
      0,
    );
    const printed = output.replace(/\s+/g, '');
    for (const fragment of SHELL.has(block.lang) ? expectedFragments(code) : printedFragments(code))
      expect(printed, `${where} shows ${fragment} in its output`).toContain(fragment);
    if (block.attrs.has('consent')) {
      const link = stateVar(state, 'LINK');
      expect(link, `${where} sets $LINK for the user to open`).toMatch(/^http/);
      const arrived = await consent(link);
      const authRequest = arrived?.searchParams.get('auth_request_id');
      if (authRequest) seen.set('areq_…', authRequest);
    }
  }
  // A server a page started must have printed what its comments say by now (a webhook arrives).
  for (const server of background) {
    const deadline = Date.now() + 30_000;
    const wanted = printedFragments(server.code);
    const missing = () => wanted.filter((f) => !server.output().replace(/\s+/g, '').includes(f));
    while (missing().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    server.child.kill();
    expect(missing(), `${server.where} printed:\n${server.output()}`).toEqual([]);
  }
  // Kept when a block fails, to look at; a passing page leaves nothing behind.
  rmSync(dir, { recursive: true, force: true });
}
