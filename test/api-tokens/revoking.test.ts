// DELETE /me/api-tokens/{token_id} (seed document 1, "Personal API tokens and delegations"): the
// owner's revocation takes effect on the next request; another account's token, an unknown id and an
// already revoked token are one indistinguishable 404 (anti-enumeration) that changes nothing.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { outcome } from '../support/refusal.js';
import { answerOf, bearer, everywhere, mint, person, tokenRow, useApp } from './support.js';

const h = useApp();

describe('DELETE /me/api-tokens/{token_id}', () => {
  it("revokes the caller's own token: 204, refused at once, gone from the list", async () => {
    const me = await person(h, 'revoke');
    const kept = await mint(me.api, [everywhere('me.read')], { name: 'kept' });
    const { secret, token } = await mint(me.api, [everywhere('me.read')], { name: 'revoked' });
    const asToken = bearer(h.app, secret);
    expect((await asToken.meGet()).id).toBe(me.id);
    await me.api.meApiTokenRevoke({ path: { token_id: token.id } });
    expect(me.lastStatus()).toBe(204);
    expect(await outcome(asToken.meGet())).toEqual([401, 'unauthenticated']);
    expect((await me.api.meApiTokenList()).map((t) => t.id)).toEqual([kept.token.id]);
    expect((await tokenRow(h.app, token.id))!.revoked_at).toEqual(h.app.clock.now());
  });

  it("answers another account's token, an unknown id and a revoked token with the same 404", async () => {
    const me = await person(h, 'revoke-404');
    const other = await person(h, 'revoke-404-other');
    const theirs = await mint(other.api, [everywhere('me.read')]);
    const mine = await mint(me.api, [everywhere('me.read')]);
    await me.api.meApiTokenRevoke({ path: { token_id: mine.token.id } });
    const revokedAt = (await tokenRow(h.app, mine.token.id))!.revoked_at;
    // Later, so that a second revocation would show as a changed revoked_at.
    h.app.clock.advance(1000);

    const answers = [];
    for (const token_id of [theirs.token.id, randomUUID(), mine.token.id]) {
      answers.push(await answerOf(me.api.meApiTokenRevoke({ path: { token_id } })));
    }
    expect(answers[0]).toMatchObject({ status: 404, code: 'not-found' });
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);

    // Nothing changed: the other account's token still works, the revoked one kept its time.
    expect((await bearer(h.app, theirs.secret).meGet()).id).toBe(other.id);
    expect((await tokenRow(h.app, theirs.token.id))!.revoked_at).toBeNull();
    expect((await tokenRow(h.app, mine.token.id))!.revoked_at).toEqual(revokedAt);
  });
});
