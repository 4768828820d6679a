// Compiles every provider's API description into its tool catalog (dist/compiled-tools/*.json),
// read lazily by the gateway: the descriptions are parsed here once, never at the gateway's start.
import { mkdir, writeFile } from 'node:fs/promises';
import { compileSource, PACKAGE_ROOT } from '../dist/tools/compiled/build.js';
import { DESCRIPTIONS } from '../dist/tools/compiled/descriptions.js';

const out = `${PACKAGE_ROOT}dist/compiled-tools`;
await mkdir(out, { recursive: true });
let total = 0;
for (const source of DESCRIPTIONS) {
  const catalog = await compileSource(source);
  total += catalog.operations.length;
  await writeFile(`${out}/${source.provider}.json`, JSON.stringify(catalog));
}
console.log(`compiled ${total} tools from ${DESCRIPTIONS.length} API descriptions`);
