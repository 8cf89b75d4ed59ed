// last_used_at of a personal API token (seed document 1, "Personal API token"): written on first use
// and then at most once a minute, by a conditional update, so that a busy token costs no write per
// request and concurrent requests (of any number of processes) record one use.
import { describe, expect, it } from 'vitest';
import { bearer, everywhere, mint, person, tokenRow, useApp } from './support.js';

const h = useApp();

const lastUsed = async (id: string) => (await tokenRow(h.app, id))!.last_used_at;

describe('last_used_at', () => {
  it('is null until the first use, then moves only once a minute has passed', async () => {
    const me = await person(h, 'last-use');
    const { secret, token } = await mint(me.api, [everywhere('me.read')]);
    const asToken = bearer(h.app, secret);
    h.app.clock.advance(5000);
    expect(await lastUsed(token.id)).toBeNull();

    const first = h.app.clock.now();
    await asToken.meGet();
    expect(await lastUsed(token.id)).toEqual(first);
    expect((await me.api.meApiTokenList())[0]!.last_used_at).toBe(first.toISOString());

    h.app.clock.advance(59_999);
    await asToken.meGet();
    expect(await lastUsed(token.id)).toEqual(first);

    h.app.clock.advance(1001);
    const later = h.app.clock.now();
    await asToken.meGet();
    expect(await lastUsed(token.id)).toEqual(later);
  });

  it('records one instant when 20 requests arrive together after a minute', async () => {
    const me = await person(h, 'last-use-burst');
    const { secret, token } = await mint(me.api, [everywhere('me.read')]);
    const asToken = bearer(h.app, secret);
    await asToken.meGet();
    h.app.clock.advance(61_000);
    const instant = h.app.clock.now();
    const answers = await Promise.all(Array.from({ length: 20 }, () => asToken.meGet()));
    expect(answers.every((a) => a.id === me.id)).toBe(true);
    expect(await lastUsed(token.id)).toEqual(instant);
  });
});
