import { type RunningEmulators, startEmulators } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../test/helpers/backends.js';
import { type CuttablePostgres, cuttablePostgres } from '../test/helpers/cuttable-postgres.js';
import { runCli } from '../test/helpers/process.js';
import { gatewayToken } from '../test/helpers/token.js';
import { freshStore, GatewayProcess, postgresEnv, printFigures, sleep } from './helpers/processes.js';

const ROUNDS = 5;
const CUT_MS = 2000;

/**
 * Two gateway processes on one PostgreSQL schema; one reaches the database through a TCP
 * pass-through that the test cuts for 2 s. Meanwhile the other process deletes an account and the
 * CLI revokes a gateway client. Once the database is reachable again the cut replica must refuse
 * both within a second, although it had both cached.
 */
describe.runIf(postgresAvailable)('a replica cut from PostgreSQL for 2 s', () => {
  let emulators: RunningEmulators;
  let pgCut: CuttablePostgres;
  let direct: GatewayProcess;
  let cut: GatewayProcess;
  let cliEnv: Record<string, string>;

  beforeAll(async () => {
    emulators = await startEmulators();
    pgCut = await cuttablePostgres();
    const { env, schema } = await freshStore('postgres');
    cliEnv = env;
    direct = await GatewayProcess.launch({ ...env, PORTICO_SANDBOX_URL: emulators.url });
    cut = await GatewayProcess.launch(
      {
        ...postgresEnv(pgCut.url, schema!, env.PORTICO_MASTER_KEY!),
        PORTICO_SANDBOX_URL: emulators.url,
      },
      direct,
      // One public URL in front of both replicas, as behind a load balancer.
      direct.url,
    );
  }, 120_000);

  afterAll(async () => {
    await cut?.stop();
    await direct?.stop();
    await pgCut?.close();
    await emulators?.close();
  });

  it('refuses a revoked client and a deleted account within 1 s of the database returning', async () => {
    const rows: Array<Record<string, string | number>> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const identifier = `cut-${round}`;
      const accountId = await direct.remote.sandboxAccount('notion', 'notion', identifier);
      const created = runCli(['clients', 'create', '--name', `doomed-${round}`], cliEnv);
      expect(created.status, created.stderr).toBe(0);
      const [doomedId, doomedSecret] = credentialsOf(created.stdout);
      const doomedToken = await gatewayToken(cut.url, doomedId, doomedSecret);
      const routed = {
        authorization: `Bearer ${await cut.remote.bearer()}`,
        connection_name: 'notion',
        identifier,
      };
      const asDoomed = () =>
        fetch(`${cut.url}/api/v1/connections`, { headers: { authorization: `Bearer ${doomedToken}` } });
      const proxied = () => fetch(`${cut.url}/proxy/v1/users/me`, { headers: routed });
      // Warm the cut replica: the client's status and the account's credential are now cached.
      for (let i = 0; i < 2; i++) {
        expect((await asDoomed()).status).toBe(200);
        expect((await proxied()).status).toBe(200);
      }

      const restored = pgCut.cut(CUT_MS);
      await sleep(50);
      const deleted = await direct.remote.api(`/api/v1/connected-accounts/${accountId}`, {
        method: 'DELETE',
      });
      expect(deleted.ok).toBe(true);
      const revoked = runCli(['clients', 'revoke', doomedId], cliEnv);
      expect(revoked.status, revoked.stderr).toBe(0);
      // The replica that made the change (and every other one that can hear) refuses at once:
      // a disconnected account answers 409 account_not_active.
      expect((await fetch(`${direct.url}/proxy/v1/users/me`, { headers: routed })).status).toBe(409);
      await restored;
      const back = Date.now();

      let clientRefusedAfter = -1;
      let accountRefusedAfter = -1;
      const statuses = new Set<string>();
      while (Date.now() - back < 10_000 && (clientRefusedAfter < 0 || accountRefusedAfter < 0)) {
        const [c, a] = await Promise.all([asDoomed(), proxied()]);
        statuses.add(`${c.status}/${a.status}`);
        if (clientRefusedAfter < 0 && c.status === 401) clientRefusedAfter = Date.now() - back;
        if (accountRefusedAfter < 0 && a.status === 409) accountRefusedAfter = Date.now() - back;
        await sleep(20);
      }
      rows.push({
        round,
        'client refused after (ms)': clientRefusedAfter,
        'account refused after (ms)': accountRefusedAfter,
        'answers seen (client/account)': [...statuses].join(' '),
      });
    }
    printFigures(`replica cut from PostgreSQL for ${CUT_MS} ms, ${ROUNDS} rounds`, rows);
    for (const row of rows) {
      for (const key of ['client refused after (ms)', 'account refused after (ms)']) {
        const ms = row[key] as number;
        expect(ms, `round ${row.round}: ${key}`).toBeGreaterThanOrEqual(0);
        expect(ms, `round ${row.round}: ${key}`).toBeLessThan(1000);
      }
    }
  }, 300_000);
});

function credentialsOf(stdout: string): [string, string] {
  const match = /client_id:\s+(cli_\w+)\n\s+client_secret:\s+(pcs_\w+)/.exec(stdout);
  if (!match) throw new Error(`no credentials in output:\n${stdout}`);
  return [match[1]!, match[2]!];
}
