// Benchmark: the token lifecycle's two paths — a cached access-token lookup (the hot path of every
// tool call and proxied request) and a refresh (row lock, token endpoint, sealed write, commit).
// Runs the gateway in-process with its sandbox emulators, on the embedded store and on PostgreSQL.
// Usage: npm run bench:tokens [-- --lookups 200000 --refreshes 50]
import { parseArgs } from 'node:util';
import { submitConsent } from '@portico/emulators';
import { pino } from 'pino';
import { loadConfig } from '../dist/config.js';
import { createGateway } from '../dist/gateway.js';
import { browserCookie, freePort, gatewayToken, onBothStores, openLink } from './lib.js';

const { values } = parseArgs({
  options: { lookups: { type: 'string', default: '200000' }, refreshes: { type: 'string', default: '50' } },
});
const LOOKUPS = Number(values.lookups);
const REFRESHES = Number(values.refreshes);

async function bench(label, env) {
  const port = await freePort();
  const config = loadConfig({
    PORTICO_PORT: String(port),
    PORTICO_HOST: '127.0.0.1',
    PORTICO_PUBLIC_URL: `http://127.0.0.1:${port}`,
    PORTICO_LOG_LEVEL: 'silent',
    ...env,
  });
  const gateway = await createGateway(config, { logger: pino({ level: 'silent' }) });
  try {
    const url = await gateway.listen();
    const creds = gateway.bootstrapClient;
    const token = await gatewayToken(url, { id: creds.client_id, secret: creds.client_secret });
    const api = (p, body) =>
      fetch(`${url}${p}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json());
    await api('/api/v1/connections', { name: 'cal', provider: 'google_calendar', sandbox: true });
    const link = await api('/api/v1/connected-accounts/authorization-link', {
      connection_name: 'cal',
      identifier: 'u',
    });
    const start = await openLink(link.link);
    await fetch(await submitConsent(start.headers.get('location'), { decision: 'allow' }), {
      redirect: 'manual',
      headers: { cookie: browserCookie(start) },
    });
    const accountId = link.connected_account_id;
    const ref = {
      environmentId: (await gateway.accountTokens.forAccount(accountId)).environmentId,
      connectionName: 'cal',
      identifier: 'u',
    };

    await gateway.accountTokens.forRef(ref);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < LOOKUPS; i++) await gateway.accountTokens.forRef(ref);
    const lookupNs = Number(process.hrtime.bigint() - t0) / LOOKUPS;

    const times = [];
    for (let i = 0; i < REFRESHES; i++) {
      await gateway.db.query('UPDATE connected_accounts SET token_expires_at = now() WHERE id = $1', [
        accountId,
      ]);
      await gateway.accountTokens.invalidate(accountId);
      const r0 = process.hrtime.bigint();
      await gateway.accountTokens.forAccount(accountId);
      times.push(Number(process.hrtime.bigint() - r0) / 1e6);
    }
    times.sort((a, b) => a - b);
    const p50 = times[Math.floor(times.length / 2)];
    const p95 = times[Math.floor(times.length * 0.95)];
    console.log(
      `${label.padEnd(10)} cached lookup ${(lookupNs / 1000).toFixed(2)} µs (${LOOKUPS} lookups) | ` +
        `refresh p50 ${p50.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms (${REFRESHES} refreshes, emulated token endpoint on loopback)`,
    );
  } finally {
    await gateway.close();
  }
}

await onBothStores(bench);
