// Benchmark: what turning the provider's links back to the proxy costs per proxied JSON answer
// (proxy/links.ts), next to JSON.parse of the same body (the floor of any rewrite that reads JSON).
// Usage: npm run bench:links [-- --iterations 20000]
import { parseArgs } from 'node:util';
import { rewriteLinks, upstreamBases } from '../dist/proxy/links.js';

const { values } = parseArgs({ options: { iterations: { type: 'string', default: '20000' } } });
const N = Number(values.iterations);
const bases = {
  upstream: upstreamBases(['https://graph.microsoft.com']),
  caller: 'https://portico.example.com/proxy',
};
const item = (i) => ({
  id: `01ABCDEF${i}`,
  name: `file-${i}.txt`,
  size: 1234 + i,
  lastModifiedDateTime: '2026-11-26T10:00:00Z',
  webUrl: `https://contoso.sharepoint.com/Documents/file-${i}.txt`,
  '@microsoft.graph.downloadUrl': `https://graph.microsoft.com/dl?tempauth=${'x'.repeat(120)}${i}`,
});
const cases = {
  'no link (small object)': { id: 1, displayName: 'Ada', mail: 'ada@example.com' },
  'Graph item (@odata.context, downloadUrl only)': {
    '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#drives/$entity',
    ...item(0),
  },
  'Graph page of 50 with @odata.nextLink': {
    '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#drives/items',
    '@odata.nextLink': 'https://graph.microsoft.com/v1.0/drives/b!1/items/root/children?$skiptoken=abc',
    value: Array.from({ length: 50 }, (_, i) => item(i)),
  },
};

function time(fn) {
  for (let i = 0; i < Math.min(N, 2000); i++) fn();
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) fn();
  return Number(process.hrtime.bigint() - start) / 1000 / N;
}

console.log(`links rewrite, ${N} iterations each (µs per answer)`);
for (const [label, body] of Object.entries(cases)) {
  const bytes = Buffer.from(JSON.stringify(body));
  const response = () => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: bytes });
  const rewrite = time(() => rewriteLinks(response(), bases));
  const parse = time(() => JSON.parse(bytes.toString('utf8')));
  console.log(
    `${label.padEnd(48)} ${String(bytes.length).padStart(6)} B  rewrite ${rewrite.toFixed(2).padStart(7)}  JSON.parse ${parse.toFixed(2).padStart(7)}  ratio ${(rewrite / parse).toFixed(2)}`,
  );
}
