// Linking provider identities to an account and unlinking them (document 1, "OAuth", "Linked OAuth
// account"; DECISIONS.md §4): the link flow bound to its caller and session, identities held
// elsewhere, the linked-account list, and the refusal to remove the last way to sign in.
import { randomUUID } from 'node:crypto';
import type { SvcClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAccount } from '../support/auth.js';
import { refusal } from '../support/refusal.js';
import {
  arrive,
  clientOf,
  counts,
  flow,
  oauthSignIn,
  startWorld,
  toCallback,
  type World,
} from './harness.js';

let w: World;
beforeAll(async () => {
  w = await startWorld();
}, 60_000);
afterAll(async () => {
  await w?.close();
});

let n = 0;
function identity(idp = w.idp, claims: Record<string, unknown> = {}): string {
  const subject = `link-${(n += 1)}-${randomUUID().slice(0, 8)}`;
  idp.accounts.set(subject, { email: `${subject}@idp.example.test`, email_verified: true, ...claims });
  return subject;
}

/** A password account, signed in. */
async function passwordAccount(
  tag: string,
): Promise<{ api: SvcClient; id: string; token: string; refresh: string }> {
  const { session } = await newAccount(w.app, w.smtp, tag);
  return {
    api: clientOf(w.app, session.token),
    id: session.user.id,
    token: session.token,
    refresh: session.refresh_token,
  };
}

const linksOf = (userId: string) =>
  w.app.sql<{ provider_id: string; provider_user_id: string }[]>`
    select provider_id, provider_user_id from oauth_accounts where user_id = ${userId} order by provider_id`;

describe('linking', () => {
  it('attaches the identity to the caller: ?linked=, no key; then it signs in to that account', async () => {
    const me = await passwordAccount('linker');
    const subject = identity();
    const back = await flow(w, subject, { link: me.api });
    expect(Object.fromEntries(back.searchParams)).toEqual({ linked: 'idp' });
    const list = await me.api.oauthAccountList();
    expect(list).toEqual([
      {
        provider_id: 'idp',
        has_avatar: false,
        email: `${subject}@idp.example.test`,
        last_used_at: w.app.clock.now().toISOString(),
      },
    ]);
    const session = await oauthSignIn(w, subject);
    expect(session.user.id).toBe(me.id);
  });

  it('links even when the identity’s address is another account’s (the identity is not the address)', async () => {
    const other = await newAccount(w.app, w.smtp, 'address-owner');
    const me = await passwordAccount('linker-2');
    const subject = identity(w.idp, { email: other.email });
    expect(Object.fromEntries((await flow(w, subject, { link: me.api })).searchParams)).toEqual({
      linked: 'idp',
    });
    expect(await linksOf(other.session.user.id)).toEqual([]);
  });

  it('refuses an identity another account holds (login_failed), moving nothing', async () => {
    const holder = await passwordAccount('holder');
    const taker = await passwordAccount('taker');
    const subject = identity();
    await flow(w, subject, { link: holder.api });
    const callback = await toCallback(w, subject, { link: taker.api });
    const before = await counts(w.app);
    const answer = await arrive(w.app, callback);
    expect(Object.fromEntries(answer.location!.searchParams)).toEqual({ error: 'login_failed' });
    expect(await counts(w.app)).toEqual(before);
    expect(await linksOf(holder.id)).toEqual([{ provider_id: 'idp', provider_user_id: subject }]);
    expect(await linksOf(taker.id)).toEqual([]);
  });

  it('refuses a second identity of a provider already linked', async () => {
    const me = await passwordAccount('twice');
    const first = identity();
    await flow(w, first, { link: me.api });
    const callback = await toCallback(w, identity(), { link: me.api });
    const before = await counts(w.app);
    expect((await arrive(w.app, callback)).location!.searchParams.get('error')).toBe('login_failed');
    expect(await counts(w.app)).toEqual(before);
    expect(await linksOf(me.id)).toEqual([{ provider_id: 'idp', provider_user_id: first }]);
  });

  it('linking the identity already linked to the caller again is fine', async () => {
    const me = await passwordAccount('again');
    const subject = identity();
    await flow(w, subject, { link: me.api });
    expect(Object.fromEntries((await flow(w, subject, { link: me.api })).searchParams)).toEqual({
      linked: 'idp',
    });
    expect(await linksOf(me.id)).toHaveLength(1);
  });

  it('is bound to the session that started it: signed out meanwhile, nothing is linked', async () => {
    const me = await passwordAccount('gone');
    const callback = await toCallback(w, identity(), { link: me.api });
    await me.api.authLogout({ body: { refresh_token: me.refresh } });
    const before = await counts(w.app);
    expect((await arrive(w.app, callback)).location!.searchParams.get('error')).toBe('login_failed');
    expect(await counts(w.app)).toEqual(before);
  });

  it('a link flow’s state does not sign anyone in, and a sign-in flow’s does not link', async () => {
    const me = await passwordAccount('kinds');
    const subject = identity();
    const back = await flow(w, subject, { link: me.api });
    expect(back.searchParams.has('key')).toBe(false);
    const [completions] = await w.app.sql<
      { n: number }[]
    >`select count(*)::int as n from oauth_completions where user_id = ${me.id}`;
    expect(completions!.n).toBe(0);
  });
});

describe('unlinking', () => {
  it('removes a link of an account with a password; a second time it is 404', async () => {
    const me = await passwordAccount('unlinker');
    await flow(w, identity(), { link: me.api });
    await me.api.oauthAccountUnlink({ path: { provider: 'idp' } });
    expect(await me.api.oauthAccountList()).toEqual([]);
    const before = await counts(w.app);
    const again = await refusal(me.api.oauthAccountUnlink({ path: { provider: 'idp' } }));
    expect([again.status, again.code]).toEqual([404, 'not-found']);
    expect(await counts(w.app)).toEqual(before);
  });

  it('refuses to remove the last way to sign in (422 last-sign-in-method) until a password is set', async () => {
    const made = await oauthSignIn(w, identity());
    const api = clientOf(w.app, made.token);
    const before = await counts(w.app);
    const refused = await refusal(api.oauthAccountUnlink({ path: { provider: 'idp' } }));
    expect([refused.status, refused.code]).toEqual([422, 'last-sign-in-method']);
    expect(await counts(w.app)).toEqual(before);
    expect(await linksOf(made.user.id)).toHaveLength(1);

    // A second provider linked: either may go, but not both.
    expect(
      Object.fromEntries((await flow(w, identity(w.spare), { provider: 'spare', link: api })).searchParams),
    ).toEqual({
      linked: 'spare',
    });
    await api.oauthAccountUnlink({ path: { provider: 'idp' } });
    const last = await refusal(api.oauthAccountUnlink({ path: { provider: 'spare' } }));
    expect([last.status, last.code]).toEqual([422, 'last-sign-in-method']);

    await api.authPasswordSet({ body: { new_password: 'a long and unusual passphrase 7' } });
    await api.oauthAccountUnlink({ path: { provider: 'spare' } });
    expect(await api.oauthAccountList()).toEqual([]);
  });

  it('two unlinks at once on a password-less account: exactly one goes', async () => {
    const made = await oauthSignIn(w, identity());
    const api = clientOf(w.app, made.token);
    await flow(w, identity(w.spare), { provider: 'spare', link: api });
    const results = await Promise.allSettled([
      api.oauthAccountUnlink({ path: { provider: 'idp' } }),
      api.oauthAccountUnlink({ path: { provider: 'spare' } }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect((failed.reason as { code: string }).code).toBe('last-sign-in-method');
    expect(await linksOf(made.user.id)).toHaveLength(1);
  });
});
