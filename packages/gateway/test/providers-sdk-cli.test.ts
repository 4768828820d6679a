import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  InvalidInputError,
  Portico,
  ProviderBuiltInError,
  ProviderExistsError,
  ProviderInUseError,
  ProviderNotFoundError,
} from '../../sdk/src/index.js';
import { BACKENDS } from './helpers/backends.js';
import { startTestGateway, type TestGateway } from './helpers/gateway.js';
import { runCliAsync } from './helpers/process.js';

// CLI commands are new processes (about a second each on a busy machine).
vi.setConfig({ testTimeout: 120_000 });

/**
 * A small API-key provider whose URLs need a per-connection subdomain. Its user-info host does not
 * exist: an import that verified the key would fail, so `verify: false` is what lets it through.
 */
function apiKeyDefinition(key: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    key,
    display_name: 'Acme CRM',
    category: 'CRM',
    auth: { kind: 'api_key', label: 'Acme API key', help: 'Settings → API keys in Acme.' },
    api: {
      base_url: 'https://{subdomain}.acme-crm.invalid',
      credential: { in: 'header', name: 'X-Api-Key', value: '{token}' },
    },
    parameters: [
      {
        name: 'subdomain',
        source: 'connection',
        label: 'Acme subdomain',
        description: 'acme for acme.acme-crm.invalid',
      },
    ],
    user_info: { url: 'https://{subdomain}.acme-crm.invalid/v1/me', id: 'id', label: 'email' },
    ...extra,
  };
}

/** The error a call is expected to fail with. */
function failure<E>(call: PromiseLike<unknown>): Promise<E> {
  return Promise.resolve(call).then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error as E,
  );
}

describe.each(BACKENDS)(
  'custom providers and imported accounts through the SDK and the CLI ($name)',
  (backend) => {
    let t: TestGateway;
    let portico: Portico;
    let env: Record<string, string>;
    const cli = (args: string[], input?: string) => runCliAsync(args, env, input);

    beforeAll(async () => {
      t = await startTestGateway(backend, {}, { awaitSandbox: false });
      portico = new Portico({ envUrl: t.url, clientId: t.clientId, clientSecret: t.clientSecret });
      env = { PORTICO_ENV_URL: t.url, PORTICO_CLIENT_ID: t.clientId, PORTICO_CLIENT_SECRET: t.clientSecret };
    });

    afterAll(async () => {
      await t?.close();
    });

    it('creates, gets, lists, replaces and deletes a custom provider with the SDK', async () => {
      const definition = apiKeyDefinition('acme_crm');
      const created = await portico.providers.create(definition);
      expect(created).toMatchObject({
        key: 'acme_crm',
        displayName: 'Acme CRM',
        builtIn: false,
        auth: 'api_key',
        docsUrl: null,
        toolPrefix: null,
        tenant: false,
        parameters: [
          {
            name: 'subdomain',
            label: 'Acme subdomain',
            description: 'acme for acme.acme-crm.invalid',
            default: null,
            required: true,
          },
        ],
        definition,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });

      const got = await portico.providers.get('acme_crm');
      expect(got).toMatchObject({ key: 'acme_crm', builtIn: false, definition });
      const builtIn = await portico.providers.get('notion');
      expect(builtIn).toMatchObject({ key: 'notion', builtIn: true, auth: 'oauth2' });
      expect(builtIn.definition).toMatchObject({ key: 'notion' });

      const listed = await portico.providers.list();
      expect(listed.find((p) => p.key === 'acme_crm')).toMatchObject({ builtIn: false, auth: 'api_key' });
      expect(listed.find((p) => p.key === 'notion')).toMatchObject({ builtIn: true });
      // Listings leave the definitions out.
      expect(listed.every((p) => !('definition' in p))).toBe(true);

      const again = await failure<ProviderExistsError>(portico.providers.create(definition));
      expect(again).toBeInstanceOf(ProviderExistsError);

      const replaced = await portico.providers.replace(
        'acme_crm',
        apiKeyDefinition('acme_crm', { display_name: 'Acme CRM (EU)' }),
      );
      expect(replaced).toMatchObject({ key: 'acme_crm', displayName: 'Acme CRM (EU)' });
      expect((await portico.providers.get('acme_crm')).displayName).toBe('Acme CRM (EU)');

      await portico.providers.delete('acme_crm');
      const gone = await failure<ProviderNotFoundError>(portico.providers.get('acme_crm'));
      expect(gone).toBeInstanceOf(ProviderNotFoundError);
      expect((await portico.providers.list()).some((p) => p.key === 'acme_crm')).toBe(false);
    });

    it('refuses a definition with mistakes, naming each field', async () => {
      const bad = apiKeyDefinition('Acme CRM');
      (bad.api as Record<string, unknown>).base_url = 'ftp://acme-crm.invalid';
      const error = await failure<InvalidInputError>(portico.providers.create(bad));
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(error.status).toBe(400);
      const paths = error.errors.map((e) => e.path);
      expect(paths).toEqual(expect.arrayContaining(['/key', '/api/base_url']));
      expect(error.errors.every((e) => e.message.length > 0)).toBe(true);
      expect((await portico.providers.list()).some((p) => p.key.startsWith('acme'))).toBe(false);
    });

    it('refuses to replace or delete a built-in provider, or to create one under its key', async () => {
      const notion = await portico.providers.get('notion');
      const replace = await failure<ProviderBuiltInError>(
        portico.providers.replace('notion', notion.definition),
      );
      expect(replace).toBeInstanceOf(ProviderBuiltInError);
      expect(replace.status).toBe(409);
      expect(await failure(portico.providers.delete('notion'))).toBeInstanceOf(ProviderBuiltInError);
      expect(await failure(portico.providers.create(apiKeyDefinition('notion')))).toBeInstanceOf(
        ProviderExistsError,
      );
      expect(
        await failure(portico.providers.replace('nothing_here', apiKeyDefinition('nothing_here'))),
      ).toBeInstanceOf(ProviderNotFoundError);
    });

    it('keeps a provider while a connection uses it; imports an API key unverified as ACTIVE', async () => {
      await portico.providers.create(apiKeyDefinition('acme_keys'));
      const connection = await portico.connections.create({
        name: 'acme',
        provider: 'acme_keys',
        parameters: { subdomain: 'acme' },
      });
      expect(connection).toMatchObject({ provider: 'acme_keys', parameters: { subdomain: 'acme' } });
      expect(await portico.connections.get('acme')).toMatchObject({ parameters: { subdomain: 'acme' } });

      const inUse = await failure<ProviderInUseError>(portico.providers.delete('acme_keys'));
      expect(inUse).toBeInstanceOf(ProviderInUseError);
      expect(inUse.detail).toContain('acme');

      const account = await portico.connectedAccounts.import({
        connectionName: 'acme',
        identifier: 'user_1',
        apiKey: 'acme_live_0123456789',
        verify: false,
      });
      expect(account).toMatchObject({
        connectionName: 'acme',
        provider: 'acme_keys',
        identifier: 'user_1',
        status: 'ACTIVE',
        label: null,
        tokenExpiresAt: null,
      });
      expect(JSON.stringify(account)).not.toContain('acme_live_0123456789');
      expect(await portico.connectedAccounts.get(account.id)).toEqual(account);

      // Credentials of another kind are named, field by field.
      const wrongKind = await failure<InvalidInputError>(
        portico.connectedAccounts.import({
          connectionName: 'acme',
          identifier: 'user_2',
          accessToken: 'at',
          verify: false,
        }),
      );
      expect(wrongKind).toBeInstanceOf(InvalidInputError);
      expect(wrongKind.errors.map((e) => e.path)).toEqual(
        expect.arrayContaining(['/access_token', '/api_key']),
      );

      await portico.connections.delete('acme');
      await portico.providers.delete('acme_keys');
    });

    it('creates and lists providers, connects with parameters and imports an account with the CLI', async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'portico-providers-'));
      const file = path.join(dir, 'beta.json');
      await writeFile(file, JSON.stringify(apiKeyDefinition('beta_api', { display_name: 'Beta API' })));

      const created = await cli(['providers', 'create', '--file', file]);
      expect(created.status, created.stderr).toBe(0);
      expect(created.stdout).toMatch(/^key:\s+beta_api$/m);
      expect(created.stdout).toMatch(/^builtIn:\s+false$/m);
      expect(created.stdout).toMatch(/^parameters:\s+subdomain$/m);
      expect(created.stdout).not.toMatch(/^definition:/m);

      const table = await cli(['providers', 'list']);
      expect(table.status, table.stderr).toBe(0);
      expect(table.stdout.split('\n')[0]).toMatch(
        /^KEY\s+NAME\s+AUTH\s+BUILT-IN\s+PARAMETERS\s+DEFAULT SCOPES$/,
      );
      expect(table.stdout).toMatch(/^beta_api\s+Beta API\s+api_key\s+no\s+subdomain\s+-$/m);
      expect(table.stdout).toMatch(/^notion\s+Notion\s+oauth2\s+yes\s/m);
      const listed = JSON.parse((await cli(['providers', 'list', '--json'])).stdout) as {
        data: { key: string; built_in: boolean }[];
      };
      // The CLI's JSON is snake_case, as the API's.
      expect(listed.data.find((p) => p.key === 'beta_api')).toMatchObject({ built_in: false });

      // The definition comes back as written: edit it and replace it from standard input.
      const got = await cli(['providers', 'get', 'beta_api', '--definition']);
      const definition = JSON.parse(got.stdout) as Record<string, unknown>;
      expect(definition).toEqual(apiKeyDefinition('beta_api', { display_name: 'Beta API' }));
      const replaced = await cli(
        ['providers', 'replace', 'beta_api', '--file', '-', '--json'],
        JSON.stringify({ ...definition, display_name: 'Beta API v2' }),
      );
      expect(replaced.status, replaced.stderr).toBe(0);
      expect(JSON.parse(replaced.stdout)).toMatchObject({ key: 'beta_api', display_name: 'Beta API v2' });

      const badFile = path.join(dir, 'bad.json');
      await writeFile(badFile, JSON.stringify(apiKeyDefinition('Beta', { display_name: '' })));
      const bad = await cli(['providers', 'create', '--file', badFile]);
      expect(bad.status).toBe(1);
      expect(bad.stderr).toMatch(/^error \(invalid_input\): /);
      expect(bad.stderr).toMatch(/^ {2}\/key: /m);
      expect(bad.stderr).toMatch(/^ {2}\/display_name: /m);
      const noFile = await cli(['providers', 'create']);
      expect(noFile.status).toBe(2);
      expect(noFile.stderr).toMatch(/providers create needs --file/);
      const builtIn = await cli(['providers', 'delete', 'notion']);
      expect(builtIn.status).toBe(1);
      expect(builtIn.stderr).toMatch(/^error \(provider_built_in\)/);

      const connection = await cli([
        'connections',
        'create',
        '--name',
        'beta',
        '--provider',
        'beta_api',
        '--parameter',
        'subdomain=beta',
        '--json',
      ]);
      expect(connection.status, connection.stderr).toBe(0);
      expect(JSON.parse(connection.stdout)).toMatchObject({
        provider: 'beta_api',
        parameters: { subdomain: 'beta' },
      });
      const badParameter = await cli([
        'connections',
        'create',
        '--name',
        'x',
        '--provider',
        'beta_api',
        '--parameter',
        'beta',
      ]);
      expect(badParameter.status).toBe(2);
      expect(badParameter.stderr).toMatch(/--parameter takes name=value/);

      // The key comes from standard input, out of the process list and the shell history.
      const imported = await cli(
        [
          'accounts',
          'import',
          '--connection',
          'beta',
          '--identifier',
          'user_9',
          '--api-key',
          '-',
          '--no-verify',
        ],
        'beta_secret_key_123\n',
      );
      expect(imported.status, imported.stderr).toBe(0);
      expect(imported.stdout).toMatch(/^status:\s+ACTIVE$/m);
      expect(imported.stdout).toMatch(/^identifier:\s+user_9$/m);
      expect(imported.stdout).not.toContain('beta_secret_key_123');
      const accounts = await portico.connectedAccounts.list({ connectionName: 'beta' }).toArray();
      expect(accounts).toMatchObject([{ identifier: 'user_9', status: 'ACTIVE' }]);

      const asJson = await cli([
        'accounts',
        'import',
        '--connection',
        'beta',
        '--identifier',
        'user_10',
        '--api-key',
        'beta_other_key',
        '--no-verify',
        '--json',
      ]);
      expect(asJson.status, asJson.stderr).toBe(0);
      expect(JSON.parse(asJson.stdout)).toMatchObject({
        identifier: 'user_10',
        status: 'ACTIVE',
        label: null,
      });

      const both = await cli([
        'accounts',
        'import',
        '--connection',
        'beta',
        '--identifier',
        'user_11',
        '--access-token',
        'at',
        '--expires-in',
        '60',
        '--expires-at',
        '2030-01-01T00:00:00Z',
      ]);
      expect(both.status).toBe(2);
      expect(both.stderr).toMatch(/--expires-in or --expires-at, not both/);
      const wrongKind = await cli([
        'accounts',
        'import',
        '--connection',
        'beta',
        '--identifier',
        'user_11',
        '--access-token',
        'at',
      ]);
      expect(wrongKind.status).toBe(1);
      expect(wrongKind.stderr).toMatch(/^error \(invalid_input\)[\s\S]*\/access_token: /);

      const inUse = await cli(['providers', 'delete', 'beta_api']);
      expect(inUse.status).toBe(1);
      expect(inUse.stderr).toMatch(/^error \(provider_in_use\)/);
      expect((await cli(['connections', 'delete', 'beta'])).status).toBe(0);
      const deleted = await cli(['providers', 'delete', 'beta_api']);
      expect(deleted.status, deleted.stderr).toBe(0);
      expect(deleted.stdout).toMatch(/^deleted:\s+true$/m);
      const missing = await cli(['providers', 'get', 'beta_api']);
      expect(missing.status).toBe(1);
      expect(missing.stderr).toMatch(/^error \(provider_not_found\)/);
    });
  },
);
