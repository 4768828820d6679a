import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { getProvider } from '../../providers/catalog.js';
import { compileDiscovery, compileOpenApi, type ProviderFacts } from './compile.js';
import { CURATED, DESCRIPTIONS, type DescriptionSource } from './descriptions.js';
import type { CompiledCatalog } from './operation.js';

/** The gateway package's root, from src/ (tests) and from dist/ alike. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Where the description of a source is on disk. */
export function descriptionPath(source: DescriptionSource): string {
  if (source.package) return createRequire(import.meta.url).resolve(`${source.package}/${source.file}`);
  return `${PACKAGE_ROOT}descriptions/${source.file}`;
}

export function providerFacts(key: string): ProviderFacts {
  const provider = getProvider(key);
  return {
    key,
    displayName: provider.displayName,
    baseUrl: provider.api.baseUrl,
    ownHeaders: Object.keys(provider.api.defaultHeaders).map((h) => h.toLowerCase()),
    versionHeader: provider.api.versionHeader?.toLowerCase(),
    curated: CURATED,
  };
}

/**
 * Reads one description and compiles it into a catalog; `taken` holds the names the provider's
 * other descriptions gave, so names stay unique across them.
 */
export async function compileSource(
  source: DescriptionSource,
  taken = new Set<string>(),
): Promise<CompiledCatalog> {
  const doc = JSON.parse(await readFile(descriptionPath(source), 'utf8'));
  const facts = providerFacts(source.provider);
  const result =
    source.format === 'openapi'
      ? compileOpenApi(doc, facts, { prefix: source.prefix, taken })
      : compileDiscovery(doc, facts);
  if (source.apiVersion && facts.versionHeader) {
    for (const op of result.operations)
      op.headers = { [facts.versionHeader]: source.apiVersion, ...op.headers };
  }
  const version =
    source.apiVersion ??
    (source.format === 'openapi'
      ? String(doc.info?.version ?? '')
      : `${doc.version}${doc.revision ? ` (revision ${doc.revision})` : ''}`);
  return {
    provider: source.provider,
    sources: [{ file: source.package ? `${source.package}/${source.file}` : source.file, version }],
    skipped: result.skipped,
    operations: result.operations,
  };
}

/** A provider's catalog from all its descriptions, in their order (the build does this once). */
export async function compileProvider(provider: string): Promise<CompiledCatalog> {
  const taken = new Set<string>();
  const catalog: CompiledCatalog = { provider, sources: [], skipped: [], operations: [] };
  const covered = new Set<string>();
  for (const source of DESCRIPTIONS.filter((d) => d.provider === provider)) {
    const one = await compileSource(source, taken);
    catalog.sources.push(...one.sources);
    catalog.skipped.push(...one.skipped);
    for (const op of one.operations) {
      const at = `${op.method} ${op.path}`;
      if (source.supplement && covered.has(at)) {
        catalog.skipped.push({ operationId: op.operationId, reason: `an earlier description has ${at}` });
        continue;
      }
      covered.add(at);
      catalog.operations.push(op);
    }
  }
  return catalog;
}
