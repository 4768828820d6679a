// Writes docs/providers/ from the provider definitions (npm run docs:providers, after npm run build).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { PROVIDER_KEYS, PROVIDERS } from '../dist/providers/catalog.js';
import { providerSchema } from '../dist/providers/definition.js';
import { definitionFormatPage, providerIndex, providerPage } from '../dist/providers/docs.js';

const dir = new URL('../../../docs/providers/', import.meta.url);
mkdirSync(dir, { recursive: true });
for (const name of readdirSync(dir)) if (name.endsWith('.md')) rmSync(new URL(name, dir));
const providers = PROVIDER_KEYS.map((key) => PROVIDERS[key]);
for (const p of providers) writeFileSync(new URL(`${p.key}.md`, dir), providerPage(p));
writeFileSync(new URL('README.md', dir), providerIndex(providers));
writeFileSync(new URL('definition-format.md', dir), definitionFormatPage(providerSchema));
console.log(`docs/providers: ${providers.length} provider pages, the index and the definition format`);
