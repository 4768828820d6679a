import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PROVIDER_KEYS, PROVIDERS } from '../src/providers/catalog.js';
import { providerSchema } from '../src/providers/definition.js';
import { definitionFormatPage, providerIndex, providerPage } from '../src/providers/docs.js';

const docs = new URL('../../../docs/providers/', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, docs), 'utf8');

// The provider pages are generated from the definitions: a page that says otherwise is stale.
describe('provider documentation', () => {
  const providers = PROVIDER_KEYS.map((k) => PROVIDERS[k]!);

  it.each(providers.map((p) => [p.key, p] as const))(
    'docs/providers/%s.md is generated from its definition',
    (_key, p) => {
      expect(read(`${p.key}.md`), 'run npm run docs:providers').toBe(providerPage(p));
    },
  );

  it('the index and the definition format are current', () => {
    expect(read('README.md'), 'run npm run docs:providers').toBe(providerIndex(providers));
    expect(read('definition-format.md'), 'run npm run docs:providers').toBe(
      definitionFormatPage(providerSchema as never),
    );
  });

  it('every page says where the operator registers, the redirect URI, what the user sees and the proxy base', () => {
    for (const p of providers) {
      const page = providerPage(p);
      expect(page).toContain('## Register at the provider');
      expect(page).toContain('## What the end user sees');
      expect(page).toContain(p.api.baseUrl);
      if (p.oauth) expect(page).toContain('/sso/v1/oauth/<connection id>/callback');
    }
  });

  it('every built-in definition names the provider page it was checked against', () => {
    for (const p of providers) expect(p.docsUrl, p.key).toMatch(/^https:\/\//);
  });
});
