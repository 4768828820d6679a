// Compiles every provider's API description into its tool catalog (dist/compiled-tools/*.json),
// read lazily by the gateway: the descriptions are parsed here once, never at the gateway's start.
import { mkdir, writeFile } from 'node:fs/promises';
import { compileProvider, PACKAGE_ROOT } from '../dist/tools/compiled/build.js';
import { COMPILED_PROVIDERS, DESCRIPTIONS } from '../dist/tools/compiled/descriptions.js';

const out = `${PACKAGE_ROOT}dist/compiled-tools`;
await mkdir(out, { recursive: true });
let total = 0;
for (const provider of COMPILED_PROVIDERS) {
  const catalog = await compileProvider(provider);
  total += catalog.operations.length;
  await writeFile(`${out}/${provider}.json`, JSON.stringify(catalog));
}
console.log(`compiled ${total} tools from ${DESCRIPTIONS.length} API descriptions`);
