import { type RunningEmulators, startEmulators } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../test/helpers/backends.js';
import { type CuttablePostgres, cuttablePostgres } from '../test/helpers/cuttable-postgres.js';
import { runCli, runCliAsync } from '../test/helpers/process.js';
import { gatewayToken } from '../test/helpers/token.js';
import { freshStore, GatewayProcess, postgresEnv, printFigures, sleep } from './helpers/processes.js';

const ROUNDS = 5;
const CUT_MS = 2000;
const HALF_OPEN_ROUNDS = 3;
/** Longer than the listener's default heartbeat interval plus deadline (2 s + 3 s), so the cut is seen. */
const HALF_OPEN_CUT_MS = 8000;
const CLIENT_REFUSED = 'client refused after (ms)';
const ACCOUNT_REFUSED = 'account refused after (ms)';

/**
 * Two gateway processes on one PostgreSQL schema; one reaches the database through a TCP
 * pass-through that the test cuts. Meanwhile the other process deletes an account and the CLI
 * revokes a gateway client. Once the database is reachable again the cut replica must refuse both,
 * although it had both cached.
 */
describe.runIf(postgresAvailable)('a replica cut from PostgreSQL', () => {
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

  /**
   * A gateway client and a connected account that the cut replica has cached (warmed by two calls
   * each), with the calls that show whether it still honours them.
   */
  async function cachedVictims(label: string) {
    const identifier = `${label}-user`;
    const accountId = await direct.remote.sandboxAccount('notion', 'notion', identifier);
    const created = runCli(['clients', 'create', '--name', `doomed-${label}`], cliEnv);
    expect(created.status, created.stderr).toBe(0);
    const [clientId, secret] = credentialsOf(created.stdout);
    const doomedToken = await gatewayToken(cut.url, clientId, secret);
    const routed = {
      authorization: `Bearer ${await cut.remote.bearer()}`,
      connection_name: 'notion',
      identifier,
    };
    const victims = {
      accountId,
      clientId,
      routed,
      asClient: () =>
        fetch(`${cut.url}/api/v1/connections`, { headers: { authorization: `Bearer ${doomedToken}` } }),
      viaAccount: () => fetch(`${cut.url}/proxy/v1/users/me`, { headers: routed }),
    };
    for (let i = 0; i < 2; i++) {
      expect((await victims.asClient()).status).toBe(200);
      expect((await victims.viaAccount()).status).toBe(200);
    }
    return victims;
  }

  /** Deletes the account through the other replica and revokes the client with the CLI. */
  async function deleteAndRevoke(victims: { accountId: string; clientId: string }): Promise<void> {
    const deleted = await direct.remote.api(`/api/v1/connected-accounts/${victims.accountId}`, {
      method: 'DELETE',
    });
    expect(deleted.ok).toBe(true);
    // Not spawnSync: the test's own pollers must go on meanwhile.
    const revoked = await runCliAsync(['clients', 'revoke', victims.clientId], cliEnv);
    expect(revoked.status, revoked.stderr).toBe(0);
  }

  /**
   * Milliseconds from `since` until the cut replica refuses the client (401) and the account (a
   * disconnected account answers 409 account_not_active); -1 for one still honoured after 10 s.
   */
  async function timeToRefusal(
    victims: Awaited<ReturnType<typeof cachedVictims>>,
    since: number,
  ): Promise<Record<string, string | number>> {
    let client = -1;
    let account = -1;
    const answers = new Set<string>();
    while (Date.now() - since < 10_000 && (client < 0 || account < 0)) {
      const [c, a] = await Promise.all([victims.asClient(), victims.viaAccount()]);
      answers.add(`${c.status}/${a.status}`);
      if (client < 0 && c.status === 401) client = Date.now() - since;
      if (account < 0 && a.status === 409) account = Date.now() - since;
      await sleep(20);
    }
    return {
      [CLIENT_REFUSED]: client,
      [ACCOUNT_REFUSED]: account,
      'answers seen (client/account)': [...answers].join(' '),
    };
  }

  it('refuses a revoked client and a deleted account within 1 s of the database returning', async () => {
    const rows: Array<Record<string, string | number>> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const victims = await cachedVictims(`cut-${round}`);
      const restored = pgCut.cut(CUT_MS);
      await sleep(50);
      await deleteAndRevoke(victims);
      // The replica that made the change (and every other one that can hear) refuses at once.
      expect((await fetch(`${direct.url}/proxy/v1/users/me`, { headers: victims.routed })).status).toBe(409);
      await restored;
      rows.push({ round, ...(await timeToRefusal(victims, Date.now())) });
    }
    printFigures(`replica cut from PostgreSQL for ${CUT_MS} ms, ${ROUNDS} rounds`, rows);
    expectRefusedWithin(rows, 1000);
  }, 300_000);

  /**
   * The half-open cut: the server's end of every connection of the cut replica closes while the
   * replica's end just goes silent. Without a heartbeat its LISTEN connection would never be seen
   * dead, and it would go on honouring both (and every later revocation) until the caches expire.
   */
  it('refuses them within 5 s of a half-open cut healing, and says the listener is degraded meanwhile', async () => {
    const rows: Array<Record<string, string | number>> = [];
    for (let round = 0; round < HALF_OPEN_ROUNDS; round++) {
      const victims = await cachedVictims(`half-open-${round}`);
      await expectListenerConfirmed();
      const cutAt = Date.now();
      let healed = false;
      const restored = pgCut.halfOpenCut(HALF_OPEN_CUT_MS).then(() => {
        healed = true;
      });
      const readiness = pollReadiness(cutAt, () => healed);
      await sleep(50);
      await deleteAndRevoke(victims);
      expect((await fetch(`${direct.url}/proxy/v1/users/me`, { headers: victims.routed })).status).toBe(409);
      await restored;
      const back = Date.now();
      const refused = await timeToRefusal(victims, back);
      const samples = await readiness;
      await expectListenerConfirmed();
      const listenerBack = Date.now() - back;
      const degradedDuringCut = samples.find((s) => s.during && s.listener === 'degraded');
      rows.push({
        round,
        'readyz degraded after cut (ms)': degradedDuringCut?.at ?? -1,
        'readyz seen during cut': summarise(samples.filter((s) => s.during)),
        'listener confirmed after (ms)': listenerBack,
        ...refused,
      });
    }
    printFigures(
      `replica cut half-open from PostgreSQL for ${HALF_OPEN_CUT_MS} ms, ${HALF_OPEN_ROUNDS} rounds`,
      rows,
    );
    console.info(listenerLog(cut.output()));
    expectRefusedWithin(rows, 5000);
    for (const row of rows) {
      expect(row['readyz degraded after cut (ms)'], `round ${row.round}: readyz degraded`).toBeGreaterThan(0);
    }
  }, 300_000);

  it('honours a later revocation and deletion at once, with no fault, after a half-open cut healed', async () => {
    const victims = await cachedVictims('after-half-open');
    await expectListenerConfirmed();
    await deleteAndRevoke(victims);
    const rows = [{ round: 0, ...(await timeToRefusal(victims, Date.now())) }];
    printFigures('after the half-open cut healed, no fault', rows);
    expectRefusedWithin(rows, 1000);
  }, 120_000);

  /** Waits (up to 20 s) for the cut replica's /readyz to be plainly ready: the listener confirmed. */
  async function expectListenerConfirmed(): Promise<void> {
    await expect
      .poll(async () => (await readyz()).body.status, { timeout: 20_000, interval: 100 })
      .toBe('ready');
  }

  async function readyz(): Promise<{ status: number; body: Record<string, unknown> }> {
    try {
      const res = await fetch(`${cut.url}/readyz`, { signal: AbortSignal.timeout(5_000) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    } catch (error) {
      return { status: 0, body: { error: (error as Error).name } };
    }
  }

  /** /readyz of the cut replica every 100 ms until the cut has healed and the listener is back. */
  async function pollReadiness(since: number, healed: () => boolean): Promise<ReadinessSample[]> {
    const samples: ReadinessSample[] = [];
    while (Date.now() - since < 60_000) {
      const during = !healed();
      const { status, body } = await readyz();
      samples.push({ at: Date.now() - since, during, status, listener: String(body.listener ?? 'ok') });
      if (!during && body.status === 'ready') break;
      await sleep(100);
    }
    return samples;
  }
});

interface ReadinessSample {
  /** Milliseconds since the cut began. */
  at: number;
  /** Whether the cut was still on when the request was sent. */
  during: boolean;
  status: number;
  listener: string;
}

/** "503 listener degraded ×12, …" in the order first seen. */
function summarise(samples: ReadinessSample[]): string {
  const counts = new Map<string, number>();
  for (const s of samples) {
    const key = `${s.status} ${s.listener}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, n]) => `${key} ×${n}`).join(', ');
}

/** The cut replica's log lines about its listener, to quote with the figures. */
function listenerLog(output: string): string {
  return output
    .split('\n')
    .filter((line) => /database listener|pooled connections/.test(line))
    .join('\n');
}

function expectRefusedWithin(rows: Array<Record<string, string | number>>, ms: number): void {
  for (const row of rows) {
    for (const key of [CLIENT_REFUSED, ACCOUNT_REFUSED]) {
      const after = row[key] as number;
      expect(after, `round ${row.round}: ${key}`).toBeGreaterThanOrEqual(0);
      expect(after, `round ${row.round}: ${key}`).toBeLessThan(ms);
    }
  }
}

function credentialsOf(stdout: string): [string, string] {
  const match = /client_id:\s+(cli_\w+)\n\s+client_secret:\s+(pcs_\w+)/.exec(stdout);
  if (!match) throw new Error(`no credentials in output:\n${stdout}`);
  return [match[1]!, match[2]!];
}
