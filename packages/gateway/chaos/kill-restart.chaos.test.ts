import net from 'node:net';
import { type RunningEmulators, startEmulators, submitConsent } from '@portico/emulators';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../test/helpers/backends.js';
import { browserCookie, openLink } from '../test/helpers/flow.js';
import { freshStore, GatewayProcess, printFigures, type StoreKind, sleep } from './helpers/processes.js';

/**
 * kill -9 of a gateway process at a random moment while it refreshes rotating providers' tokens
 * (Notion, Microsoft/SharePoint), streams a proxied upload and handles an authorization callback;
 * then a restart on the same store (the same PGlite data directory, or the same PostgreSQL schema).
 *
 * Half the runs slow the token endpoints down, so the kill often lands while the provider holds
 * the request; the other half leave them at full speed. An account counts as lost when it cannot
 * be used after the restart; a loss is inside the documented window when the provider rotated its
 * refresh token (the emulator counts the grant per client, and each account has a client of its
 * own) and the gateway died before committing the new one. Any other loss is a bug.
 */
const RUNS = Number(process.env.CHAOS_KILL_RUNS ?? 24);
const PER_PROVIDER = 2;
const SLOW_TOKEN_MS = 400;
const UPLOAD_BYTES = 2 * 1024 * 1024;
const UPLOAD_TYPE = 'application/x-chaos-upload';
const ROTATING = [
  {
    provider: 'notion',
    emulator: 'notion',
    tokenPath: '^/notion/v1/oauth/token',
    probe: '/proxy/v1/users/me',
  },
  {
    provider: 'sharepoint',
    emulator: 'microsoft',
    tokenPath: '^/microsoft/[^/]+/oauth2/v2.0/token',
    probe: '/proxy/v1.0/me',
  },
] as const;

interface RefreshVictim {
  run: number;
  slow: boolean;
  provider: string;
  emulator: 'notion' | 'microsoft';
  connection: string;
  clientId: string;
  probe: string;
}

const STORES: StoreKind[] = ['pglite', ...(postgresAvailable ? (['postgres'] as const) : [])];

// The stores run side by side: most of each one's time is spent waiting (on restarts, on the slowed
// token endpoints, on the dead processes' refresh leases), and each has its own gateway and emulators.
describe.concurrent.each(STORES)('kill -9 and restart on %s', (store) => {
  let emulators: RunningEmulators;
  let gw: GatewayProcess;

  beforeAll(async () => {
    emulators = await startEmulators();
    const { env } = await freshStore(store);
    gw = await GatewayProcess.launch({ ...env, PORTICO_SANDBOX_URL: emulators.url });
    await gw.remote.sandboxAccount('google_drive', 'drive', 'uploader');
    await connection(gw, 'crm', 'hubspot');
  }, 120_000);

  afterAll(async () => {
    await gw?.stop();
    await emulators?.close();
  });

  it(`loses no account outside the documented window over ${RUNS} kills`, async () => {
    const victims: RefreshVictim[] = [];
    const callbacks: Array<{ run: number; identifier: string; accountId: string }> = [];
    const failedStarts: string[] = [];
    const uploads = { sent: 0, answeredBeforeKill: 0 };
    let lastKill = 0;

    for (let run = 0; run < RUNS; run++) {
      const slow = run % 2 === 0;
      const runVictims: RefreshVictim[] = [];
      for (const spec of ROTATING) {
        for (let k = 0; k < PER_PROVIDER; k++) {
          const name = `${spec.provider}-${run}-${k}`;
          const { client_id } = await connection(gw, name, spec.provider);
          await gw.remote.sandboxAccount(spec.provider, name, 'victim');
          runVictims.push({ run, slow, ...spec, connection: name, clientId: client_id, probe: spec.probe });
        }
      }
      victims.push(...runVictims);
      // The callback: the user has consented at the provider; the gateway has yet to exchange the code.
      const identifier = `callback-${run}`;
      const link = (await (
        await gw.remote.api('/api/v1/connected-accounts/authorization-link', {
          method: 'POST',
          json: { connection_name: 'crm', identifier },
        })
      ).json()) as { link: string; connected_account_id: string };
      const opened = await openLink(link.link);
      const callbackUrl = await submitConsent(opened.headers.get('location')!, { decision: 'allow' });
      callbacks.push({ run, identifier, accountId: link.connected_account_id });

      // Every victim's access token is refused from now on: its next call refreshes.
      for (const v of runVictims) emulators.control.expireAccessTokens(v.emulator, { clientId: v.clientId });
      if (slow) {
        for (const spec of ROTATING) {
          emulators.control.addFault({ path: spec.tokenPath, latencyMs: SLOW_TOKEN_MS, times: PER_PROVIDER });
        }
        emulators.control.addFault({ path: '^/hubspot/oauth/v1/token', latencyMs: SLOW_TOKEN_MS });
      }
      const bearer = await gw.remote.bearer();
      const inFlight = [
        ...runVictims.map((v) =>
          fetch(`${gw.url}${v.probe}`, {
            headers: {
              authorization: `Bearer ${bearer}`,
              connection_name: v.connection,
              identifier: 'victim',
            },
          }).catch(() => undefined),
        ),
        fetch(callbackUrl, { redirect: 'manual', headers: { cookie: browserCookie(opened) } }).catch(
          () => undefined,
        ),
        upload(gw, bearer).then((answered) => {
          if (answered) uploads.answeredBeforeKill++;
        }),
      ];
      uploads.sent++;
      // Anywhere from before the first refresh starts to after the slow provider answered.
      await sleep(Math.random() * (slow ? SLOW_TOKEN_MS + 300 : 120));
      await gw.kill9();
      lastKill = Date.now();
      await Promise.all(inFlight);
      // Let the emulators finish what they were handed (they handle a request whose caller left).
      await sleep(slow ? SLOW_TOKEN_MS + 100 : 50);
      emulators.control.clearFaults();
      try {
        await gw.start();
      } catch (error) {
        failedStarts.push(`run ${run}: ${(error as Error).message.slice(0, 300)}`);
        await gw.start();
      }
    }
    const grants = emulators.control.counters().token_grants;

    // Callbacks: whatever the kill interrupted, the account is ACTIVE and usable, or still waiting
    // for its user, who can start again with a new link.
    const callbackProblems: string[] = [];
    let callbacksCommitted = 0;
    for (const c of callbacks) {
      const account = (await (await gw.remote.api(`/api/v1/connected-accounts/${c.accountId}`)).json()) as {
        status: string;
      };
      if (account.status === 'ACTIVE') callbacksCommitted++;
      else if (account.status !== 'PENDING_AUTH') callbackProblems.push(`run ${c.run}: ${account.status}`);
      if (account.status !== 'ACTIVE') {
        await gw.remote.sandboxAccount('hubspot', 'crm', c.identifier).catch((error: Error) => {
          callbackProblems.push(`run ${c.run}: re-authorizing failed: ${error.message}`);
        });
      }
      const used = await gw.remote.api('/proxy/crm/v3/objects/contacts?limit=1', {
        headers: { connection_name: 'crm', identifier: c.identifier },
      });
      if (used.status !== 200) callbackProblems.push(`run ${c.run}: proxied call answered ${used.status}`);
    }

    // Uploads: a file the provider kept is whole; the uploader's account still works.
    const listed = await gw.remote.api(
      `/proxy/drive/v3/files?q=${encodeURIComponent(`mimeType = '${UPLOAD_TYPE}'`)}&fields=files(id,size)&pageSize=1000`,
      { headers: { connection_name: 'drive', identifier: 'uploader' } },
    );
    expect(listed.status).toBe(200);
    const files = ((await listed.json()) as { files: Array<{ size: string }> }).files;
    const truncated = files.filter((f) => Number(f.size) !== UPLOAD_BYTES).length;

    // A dead process's refresh lease runs out after 30 s; until then its accounts wait for it. The
    // callbacks and uploads above need no refresh of theirs, so they were checked in the meantime.
    await sleep(Math.max(0, lastKill + 31_000 - Date.now()));
    const bearer = await gw.remote.bearer();
    const results = await Promise.all(
      victims.map(async (v) => {
        const res = await fetch(`${gw.url}${v.probe}`, {
          headers: { authorization: `Bearer ${bearer}`, connection_name: v.connection, identifier: 'victim' },
        });
        const rotated = (grants[v.emulator]?.by_client[v.clientId]?.refresh_token ?? 0) > 0;
        return { ...v, status: res.status, rotated, body: res.ok ? '' : await res.text() };
      }),
    );

    const rows = [true, false].flatMap((slow) =>
      ROTATING.map((spec) => {
        const mine = results.filter((r) => r.slow === slow && r.provider === spec.provider);
        const lost = mine.filter((r) => r.status !== 200);
        const inWindow = lost.filter((r) => r.status === 409 && r.rotated);
        return {
          store,
          token_endpoint: slow ? `slowed ${SLOW_TOKEN_MS} ms` : 'full speed',
          provider: spec.provider,
          refreshes_killed: mine.length,
          accounts_lost: lost.length,
          in_window: inWindow.length,
          outside_window: lost.length - inWindow.length,
          window_rate: `${((100 * inWindow.length) / Math.max(1, mine.length)).toFixed(0)}%`,
        };
      }),
    );
    printFigures(
      `kill -9 during refreshes on ${store}: ${RUNS} kills, ${PER_PROVIDER} accounts per provider each`,
      rows,
    );
    printFigures(`kill -9 during callbacks and uploads on ${store}`, [
      {
        store,
        kills: RUNS,
        failed_restarts: failedStarts.length,
        callbacks_committed: callbacksCommitted,
        callbacks_wrong: callbackProblems.length,
        uploads_sent: uploads.sent,
        uploads_answered_before_kill: uploads.answeredBeforeKill,
        files_kept: files.length,
        files_truncated: truncated,
        gateway_start_ms_median: [...gw.startTimes].sort((a, b) => a - b)[
          Math.floor(gw.startTimes.length / 2)
        ]!,
      },
    ]);

    expect(failedStarts).toEqual([]);
    expect(callbackProblems).toEqual([]);
    expect(truncated).toBe(0);
    const outside = results.filter((r) => r.status !== 200 && !(r.status === 409 && r.rotated));
    expect(
      outside.map(
        (r) => `${r.connection} (slow ${r.slow}): ${r.status} rotated=${r.rotated} ${r.body.slice(0, 200)}`,
      ),
    ).toEqual([]);
  }, 600_000);
});

async function connection(
  gw: GatewayProcess,
  name: string,
  provider: string,
): Promise<{ client_id: string }> {
  const res = await gw.remote.api('/api/v1/connections', {
    method: 'POST',
    json: { name, provider, sandbox: true },
  });
  if (res.status !== 201) throw new Error(`connection ${name}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { client_id: string };
}

/**
 * A proxied upload whose body trickles in over ~0.6 s, so the kill can land mid-stream. Resolves
 * true when the gateway answered before it died.
 */
function upload(gw: GatewayProcess, bearer: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(gw.port, '127.0.0.1');
    let answer = '';
    const chunk = Buffer.alloc(UPLOAD_BYTES / 16, 7);
    let sent = 0;
    const timer = setInterval(() => {
      if (sent === 16 || socket.destroyed) return clearInterval(timer);
      socket.write(chunk);
      sent++;
    }, 40);
    socket.on('connect', () =>
      socket.write(
        `POST /proxy/upload/drive/v3/files?uploadType=media HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Authorization: Bearer ${bearer}\r\nconnection_name: drive\r\nidentifier: uploader\r\n` +
          `Content-Type: ${UPLOAD_TYPE}\r\nContent-Length: ${UPLOAD_BYTES}\r\nConnection: close\r\n\r\n`,
      ),
    );
    socket.on('data', (d) => (answer += d));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve(/^HTTP\/1\.1 200/.test(answer));
    });
  });
}
