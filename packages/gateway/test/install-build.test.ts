import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// `npm ci` builds the workspace (the root's prepare script) and `npm start` builds only what
// changed, saying so before a compile. Played on a small workspace of the same layout (inside the
// checkout, so TypeScript resolves), never on this checkout's own dist.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const rootPackage = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};
const DIR = path.join(ROOT, 'node_modules/.cache/install-build');
const PROJECTS = ['emulators', 'sdk', 'gateway'];

function npm(script: string): { status: number | null; out: string } {
  const r = spawnSync('npm', ['run', '--silent', script], {
    cwd: DIR,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

function startBuild(): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, ['packages/gateway/scripts/build-if-needed.js'], {
    cwd: DIR,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('building at install, and at start only when needed', () => {
  beforeAll(() => {
    rmSync(DIR, { recursive: true, force: true });
    for (const name of PROJECTS) {
      const dir = path.join(DIR, 'packages', name);
      mkdirSync(path.join(dir, 'src'), { recursive: true });
      writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            composite: true,
            rootDir: 'src',
            outDir: 'dist',
            module: 'NodeNext',
            target: 'ES2022',
            types: [],
          },
          include: ['src'],
        }),
      );
      writeFileSync(
        path.join(dir, 'src', name === 'gateway' ? 'cli.ts' : 'index.ts'),
        'export const x = 1;\n',
      );
    }
    mkdirSync(path.join(DIR, 'packages/gateway/scripts'), { recursive: true });
    copyFileSync(
      path.join(ROOT, 'packages/gateway/scripts/build-if-needed.js'),
      path.join(DIR, 'packages/gateway/scripts/build-if-needed.js'),
    );
    writeFileSync(
      path.join(DIR, 'package.json'),
      JSON.stringify({
        name: 'install-build-fixture',
        private: true,
        type: 'module',
        scripts: {
          build: 'tsc -b packages/emulators packages/sdk packages/gateway',
          prepare: rootPackage.scripts.prepare,
        },
      }),
    );
  });
  afterAll(() => rmSync(DIR, { recursive: true, force: true }));

  it('the root package builds at install (prepare), and npm start builds before starting', () => {
    expect(rootPackage.scripts.prepare).toMatch(/npm run build/);
    expect(rootPackage.scripts.start).toMatch(
      /^node packages\/gateway\/scripts\/build-if-needed\.js && node /,
    );
  });

  it('prepare builds a checkout, and skips when the sources are not there yet (the image installs first)', () => {
    const src = path.join(DIR, 'packages/gateway/src');
    rmSync(src, { recursive: true, force: true });
    expect(npm('prepare').status).toBe(0);
    expect(existsSync(path.join(DIR, 'packages/sdk/dist/index.js'))).toBe(false);
    mkdirSync(src);
    writeFileSync(path.join(src, 'cli.ts'), 'export const x = 1;\n');
    const prepared = npm('prepare');
    expect(prepared.status, prepared.out).toBe(0);
    expect(existsSync(path.join(DIR, 'packages/gateway/dist/cli.js'))).toBe(true);
  });

  it('start then compiles nothing and prints nothing; changed sources are compiled, and it says so first', () => {
    const quiet = startBuild();
    expect(quiet.status, quiet.out).toBe(0);
    expect(quiet.out).toBe('');
    writeFileSync(path.join(DIR, 'packages/sdk/src/index.ts'), 'export const x = 2;\n');
    const changed = startBuild();
    expect(changed.status, changed.out).toBe(0);
    expect(changed.out).toMatch(/^Portico: sources changed since the last build; compiling them/);
    expect(readFileSync(path.join(DIR, 'packages/sdk/dist/index.js'), 'utf8')).toContain('x = 2');
  });

  it('a first start without a build says it compiles, then builds', () => {
    rmSync(path.join(DIR, 'packages/gateway/dist'), { recursive: true, force: true });
    rmSync(path.join(DIR, 'packages/gateway/tsconfig.tsbuildinfo'), { force: true });
    const first = startBuild();
    expect(first.status, first.out).toBe(0);
    expect(first.out).toMatch(/^Portico: compiling before the first start/);
    expect(existsSync(path.join(DIR, 'packages/gateway/dist/cli.js'))).toBe(true);
  });
});
