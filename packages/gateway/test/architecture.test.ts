import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The import graph, checked: folders of the gateway import only their own layer or layers below,
 * and no two folders (no two emulator files) import each other. The layers are listed here, once;
 * ARCHITECTURE.md draws them. Known exceptions are listed with their reason and must shrink: one
 * that no longer occurs fails the test as well, so the list cannot go stale.
 */
const LAYERS: Record<string, string[]> = {
  composition: ['.', 'cli'],
  interfaces: ['http', 'mcp', 'grpc'],
  services: [
    'dashboard',
    'authorization',
    'connections',
    'accounts',
    'tools',
    'toolsets',
    'guardrails',
    'executions',
    'proxy',
    'sandbox',
    'auth',
    'webhooks',
    'events',
    'audit',
    'triggers',
  ],
  infrastructure: ['oauth', 'upstream', 'governor', 'store', 'secrets', 'logging', 'metrics', 'tracing'],
  catalog: ['providers'],
  // Below the catalog: provider definitions are validated with the same JSON Schema checks.
  checks: ['validation'],
  base: ['errors'],
};
const RANK = new Map(
  Object.values(LAYERS).flatMap((folders, rank) => folders.map((f) => [f, rank] as const)),
);

/** Imports that break the rule today, each with why it is still there (none now). */
const KNOWN_UPWARD = new Set<string>([]);

const root = fileURLToPath(new URL('../../', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return sourceFiles(file);
    return file.endsWith('.ts') ? [file] : [];
  });
}

/** Relative imports of every file, resolved to files. */
function imports(dir: string): Array<[string, string]> {
  return sourceFiles(dir).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/(?:import|export)[^'"]*?from\s+'(\.[^']+)'/g)].map(
      (m) => [file, path.resolve(path.dirname(file), m[1]!).replace(/\.js$/, '.ts')] as [string, string],
    ),
  );
}

describe('architecture', () => {
  const src = path.join(root, 'gateway/src');
  const folderOf = (file: string) => path.relative(src, path.dirname(file)).split(path.sep)[0] || '.';
  const edges = new Set(
    imports(src)
      .map(([from, to]) => `${folderOf(from)} -> ${folderOf(to)}`)
      .filter((edge) => edge.split(' -> ')[0] !== edge.split(' -> ')[1]),
  );

  it('places every gateway folder in a layer', () => {
    const folders = new Set([...edges].flatMap((e) => e.split(' -> ')));
    expect([...folders].filter((f) => !RANK.has(f))).toEqual([]);
  });

  it('has no two gateway folders importing each other', () => {
    const mutual = [...edges].filter((e) => {
      const [a, b] = e.split(' -> ');
      return a! < b! && edges.has(`${b} -> ${a}`);
    });
    expect(mutual).toEqual([]);
  });

  it('imports only downward (or within a layer), but for the listed exceptions', () => {
    const upward = [...edges].filter((e) => {
      const [a, b] = e.split(' -> ');
      return RANK.get(b!)! < RANK.get(a!)!;
    });
    expect(upward.filter((e) => !KNOWN_UPWARD.has(e))).toEqual([]);
    expect([...KNOWN_UPWARD].filter((e) => !upward.includes(e))).toEqual([]);
  });

  it('keeps the interfaces off the store and the upstream client: they call a service', () => {
    // Only `import type` (and `export type`) is left out: with verbatimModuleSyntax even
    // `import { type X }` loads the module. A row type a gRPC message is mapped from is fine.
    // Allowed: file -> what it imports, with the reason it must stay (none now).
    const allowed = new Map<string, string>([]);
    const statement = /(?:^|\n)\s*(?:import|export)\s+(?!type\s)[^'";]*?from\s+'(\.[^']+)'/g;
    const bare = /(?:^|\n)\s*import\s+'(\.[^']+)'/g;
    const dynamic = /(?<!typeof\s*)import\(\s*'(\.[^']+)'\s*\)/g;
    const rel = (file: string) => path.relative(src, file).split(path.sep).join('/');
    const found = LAYERS.interfaces!.flatMap((folder) =>
      sourceFiles(path.join(src, folder)).flatMap((file) => {
        const text = readFileSync(file, 'utf8');
        return [...text.matchAll(statement), ...text.matchAll(bare), ...text.matchAll(dynamic)]
          .map((m) => path.resolve(path.dirname(file), m[1]!).replace(/\.js$/, '.ts'))
          .filter((target) => ['store', 'upstream'].includes(folderOf(target)))
          .map((target) => `${rel(file)} -> ${rel(target)}`);
      }),
    );
    expect(found.filter((edge) => !allowed.has(edge))).toEqual([]);
    expect([...allowed.keys()].filter((edge) => !found.includes(edge))).toEqual([]);
  });

  it('deletes no environment: execution records rely on it (migration 32 dropped their check)', () => {
    const deleting = /DELETE\s+FROM\s+environments\b|TRUNCATE\s+(TABLE\s+)?environments\b/i;
    const found = sourceFiles(src).filter((file) => deleting.test(readFileSync(file, 'utf8')));
    expect(found.map((file) => path.relative(src, file))).toEqual([]);
  });

  it('keeps HTTP servers and frameworks out of the services and the layers below', () => {
    // The services answer calls; which server received them is the interfaces' business (the
    // HTTP interface hosts the embedded emulators). The metrics registry can listen on a port of
    // its own.
    const allowed = new Set(['metrics/server.ts']);
    const serverSide = /from\s+'(fastify|@fastify\/[^']+|node:http|node:http2)'/;
    const offenders = sourceFiles(src)
      .filter((file) => RANK.get(folderOf(file))! >= RANK.get('dashboard')!)
      .map((file) => path.relative(src, file).split(path.sep).join('/'))
      .filter((file) => !allowed.has(file) && serverSide.test(readFileSync(path.join(src, file), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('keeps every emulator function within 100 lines (a route function is a list of endpoints)', () => {
    const long = sourceFiles(path.join(root, 'emulators/src')).flatMap((file) => {
      const lines = readFileSync(file, 'utf8').split('\n');
      const found: string[] = [];
      let start = -1;
      let name = '';
      lines.forEach((line, i) => {
        const opening = /^(?:export )?(?:async )?function (\w+)/.exec(line);
        if (opening) [start, name] = [i, opening[1]!];
        if (start >= 0 && line === '}') {
          if (i - start + 1 > 100) found.push(`${path.relative(root, file)} ${name}: ${i - start + 1} lines`);
          start = -1;
        }
      });
      return found;
    });
    expect(long).toEqual([]);
  });

  it('has no import cycles among the emulators’ files', () => {
    const emulators = path.join(root, 'emulators/src');
    const graph = new Map<string, Set<string>>();
    for (const [from, to] of imports(emulators)) {
      const set = graph.get(from) ?? new Set();
      set.add(to);
      graph.set(from, set);
    }
    // Any cycle, not only two files importing each other: a depth-first walk that meets a file
    // still on its path has found one.
    const cycles: string[] = [];
    const done = new Set<string>();
    const walk = (file: string, trail: string[]) => {
      if (trail.includes(file)) {
        const loop = [...trail.slice(trail.indexOf(file)), file];
        cycles.push(loop.map((f) => path.relative(emulators, f)).join(' -> '));
        return;
      }
      if (done.has(file)) return;
      for (const next of graph.get(file) ?? []) walk(next, [...trail, file]);
      done.add(file);
    };
    for (const file of graph.keys()) walk(file, []);
    expect(cycles).toEqual([]);
  });
});
