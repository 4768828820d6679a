import { readFileSync } from 'node:fs';
import { DockerfileParser } from 'dockerfile-ast';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { NODE_FLAGS } from '../src/node-flags.js';

// Images cannot be built on the test machines; these checks keep the container files honest: they
// parse, and they run the commands the repository itself runs (CI's install and build, npm start).
const root = new URL('../../../', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, root), 'utf8');
const packageJson = JSON.parse(read('package.json')) as { scripts: Record<string, string> };

describe('Dockerfile', () => {
  const dockerfile = DockerfileParser.parse(read('Dockerfile'));
  const instructions = dockerfile.getInstructions().map((i) => ({
    keyword: i.getKeyword(),
    args: i.getArgumentsContent() ?? '',
  }));
  const finalStage = instructions.slice(instructions.map((i) => i.keyword).lastIndexOf('FROM'));

  it('parses without problems and builds in two stages', () => {
    expect(instructions.filter((i) => i.keyword === 'FROM')).toHaveLength(2);
    expect(instructions.every((i) => i.keyword === i.keyword.toUpperCase())).toBe(true);
  });

  it('installs from the lock file and builds as CI does', () => {
    const runs = instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs.some((r) => r.startsWith('npm ci'))).toBe(true);
    expect(runs.some((r) => r.startsWith('npm run build'))).toBe(true);
    expect(read('.ci/run')).toMatch(/npm ci/);
    expect(packageJson.scripts.build).toBeTruthy();
  });

  it('runs the gateway as npm start does, as a non-root user, with a health check on /readyz', () => {
    const start = /node (--\S+ )*(packages\/gateway\/dist\/cli\.js start)/.exec(
      packageJson.scripts.start!,
    )![2];
    const cmd = finalStage.find((i) => i.keyword === 'CMD')!;
    expect(JSON.parse(cmd.args).join(' ')).toBe(`node ${start}`);
    const user = finalStage.find((i) => i.keyword === 'USER');
    expect(user?.args).toBeTruthy();
    expect(user!.args).not.toMatch(/^(root|0)$/);
    const health = finalStage.find((i) => i.keyword === 'HEALTHCHECK')!;
    expect(health.args).toContain('/readyz');
    // The V8 flags npm start passes on the command line come from NODE_OPTIONS here: both the list.
    expect(finalStage.find((i) => i.keyword === 'ENV')!.args).toContain(
      `NODE_OPTIONS="${NODE_FLAGS.join(' ')}"`,
    );
    expect(packageJson.scripts.start).toContain(
      `node ${NODE_FLAGS.join(' ')} packages/gateway/dist/cli.js start`,
    );
    // The gateway binds loopback by default with the embedded store; the container's is its
    // published port, so the image binds every interface (its embedded store included).
    expect(finalStage.find((i) => i.keyword === 'ENV')!.args).toMatch(/\bPORTICO_HOST=0\.0\.0\.0\b/);
  });

  it('ships every file the gateway reads at run time beside its dist: the dashboard and the provider definitions', () => {
    const copied = finalStage.filter((i) => i.keyword === 'COPY').map((i) => i.args);
    for (const dir of [
      'packages/gateway/dist',
      'packages/gateway/dashboard-ui',
      'packages/gateway/providers',
    ])
      expect(
        copied.some((c) => c.endsWith(` ${dir}`)),
        dir,
      ).toBe(true);
  });
});

describe('compose.yaml', () => {
  const compose = parse(read('compose.yaml')) as {
    services: Record<
      string,
      {
        image?: string;
        build?: string;
        environment?: Record<string, string>;
        depends_on?: Record<string, { condition: string }>;
        healthcheck?: unknown;
      }
    >;
  };

  it('runs Portico on PostgreSQL, started once the database is healthy, with a required master key', () => {
    const { portico, postgres } = compose.services;
    expect(postgres?.image).toMatch(/^postgres:/);
    expect(postgres?.healthcheck).toBeTruthy();
    expect(portico?.build).toBe('.');
    expect(portico?.depends_on?.postgres?.condition).toBe('service_healthy');
    expect(portico?.environment?.DATABASE_URL).toMatch(/^postgres:\/\/\w+:\w+@postgres:5432\/\w+$/);
    expect(portico?.environment?.PORTICO_MASTER_KEY).toMatch(/^\$\{PORTICO_MASTER_KEY:\?/);
  });
});
