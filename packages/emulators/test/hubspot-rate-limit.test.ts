import { describe, expect, it } from 'vitest';
import { useEmulators } from './helpers/emulators.js';

const emu = useEmulators({ modules: ['hubspot'] });

describe('HubSpot: the ten-secondly burst limit of public apps', () => {
  it('answers the 111th request of 10 s with 429 RATE_LIMIT and says where each call stands', async () => {
    const { access_token } = emu.control.issueToken('hubspot', { userId: '71000003' });
    const get = () =>
      fetch(`${emu.urls.hubspot}/crm/v3/objects/contacts?limit=1`, {
        headers: { authorization: `Bearer ${access_token}` },
      });
    const answers = await Promise.all(Array.from({ length: 115 }, get));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(110);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
    const ok = answers.find((r) => r.status === 200)!;
    expect(ok.headers.get('x-hubspot-ratelimit-max')).toBe('110');
    expect(ok.headers.get('x-hubspot-ratelimit-interval-milliseconds')).toBe('10000');
    const limited = answers.find((r) => r.status === 429)!;
    expect(limited.headers.get('x-hubspot-ratelimit-remaining')).toBe('0');
    // HubSpot names the policy and sends no Retry-After for its burst limit.
    expect(limited.headers.get('retry-after')).toBeNull();
    expect(await limited.json()).toMatchObject({
      status: 'error',
      errorType: 'RATE_LIMIT',
      policyName: 'TEN_SECONDLY_ROLLING',
      message: 'You have reached your ten_secondly_rolling limit.',
    });
    await Promise.all(answers.filter((r) => !r.bodyUsed).map((r) => r.arrayBuffer()));
    // Another portal has its own window.
    const other = emu.control.issueToken('hubspot', { userId: '71000001' }).access_token;
    const res = await fetch(`${emu.urls.hubspot}/crm/v3/objects/contacts?limit=1`, {
      headers: { authorization: `Bearer ${other}` },
    });
    expect(res.status).toBe(200);
  });
});
