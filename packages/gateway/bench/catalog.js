// Benchmark: what the tools compiled from the providers' API descriptions cost. In one run, with
// PORTICO_COMPILED_TOOLS=false (the 45 specification tools) and =true (every compiled tool too),
// on the embedded store: the gateway's start time (spawn to /readyz), its RSS after start, the
// latency of GET /api/v1/tools (the first call, which reads the catalogs, then the median of warm
// ones) and the RSS after them, and the ratios. Targets: start within 1.5x, RSS within +100 MiB.
// Usage: npm run bench:catalog [-- --runs 3 --lists 20]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { gatewayToken, rssOf, startGateway, stop } from './lib.js';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '3' }, lists: { type: 'string', default: '20' } },
});
const RUNS = Number(values.runs);
const LISTS = Number(values.lists);
const MiB = 1024 * 1024;
const median = (v) => v.slice().sort((a, b) => a - b)[Math.floor(v.length / 2)];

async function once(compiled) {
  const dir = await mkdtemp(path.join(tmpdir(), 'portico-bench-catalog-'));
  const gw = await startGateway({ PORTICO_DATA_DIR: dir, PORTICO_COMPILED_TOOLS: String(compiled) });
  try {
    const startRss = await rssOf(gw.child.pid);
    const token = await gatewayToken(gw.url, gw.creds);
    const list = async () => {
      const began = performance.now();
      const res = await fetch(`${gw.url}/api/v1/tools`, { headers: { authorization: `Bearer ${token}` } });
      const body = await res.json();
      if (res.status !== 200) throw new Error(`GET /api/v1/tools answered ${res.status}`);
      return { ms: performance.now() - began, count: body.data.length };
    };
    const first = await list();
    const warm = [];
    for (let i = 0; i < LISTS; i++) warm.push((await list()).ms);
    return {
      startMs: gw.ms,
      startRss,
      firstMs: first.ms,
      warmMs: median(warm),
      rss: await rssOf(gw.child.pid),
      count: first.count,
    };
  } finally {
    await stop(gw.child);
    await rm(dir, { recursive: true, force: true });
  }
}

async function measure(compiled) {
  const runs = [];
  // Alternating would share the machine's noise better, but each start is a fresh process anyway.
  for (let i = 0; i < RUNS; i++) runs.push(await once(compiled));
  const pick = (k) => median(runs.map((r) => r[k]));
  return {
    count: runs[0].count,
    startMs: pick('startMs'),
    startRss: pick('startRss'),
    firstMs: pick('firstMs'),
    warmMs: pick('warmMs'),
    rss: pick('rss'),
  };
}

const without = await measure(false);
const withCompiled = await measure(true);
const row = (label, m) =>
  `${label.padEnd(22)} tools ${String(m.count).padStart(5)}  start ${m.startMs.toFixed(0).padStart(5)} ms  ` +
  `rss at start ${(m.startRss / MiB).toFixed(1).padStart(6)} MiB  GET /api/v1/tools first ${m.firstMs.toFixed(1).padStart(7)} ms, ` +
  `warm ${m.warmMs.toFixed(1).padStart(6)} ms  rss after ${(m.rss / MiB).toFixed(1).padStart(6)} MiB`;
console.log(row('specification only', without));
console.log(row('with compiled tools', withCompiled));
console.log(
  `ratios: start ${(withCompiled.startMs / without.startMs).toFixed(2)}x (target <= 1.5x), ` +
    `rss at start +${((withCompiled.startRss - without.startRss) / MiB).toFixed(1)} MiB, ` +
    `rss after listing +${((withCompiled.rss - without.rss) / MiB).toFixed(1)} MiB (target <= +100 MiB), ` +
    `warm list ${(withCompiled.warmMs / without.warmMs).toFixed(1)}x for ${(withCompiled.count / without.count).toFixed(0)}x the tools`,
);
