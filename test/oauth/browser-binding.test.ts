// A flow is finished only in the browser that started it (RFC 9700 §4.7; server/src/features/oauth/
// browser.ts). An attacker who gets a victim to open the attacker's authorization URL (the victim has
// consented at the provider before, so it redirects at once) links nothing and signs nobody in; the
// flow is spent. svcctl's loopback sign-in, which starts outside the browser, is the one exemption.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newAccount } from '../support/auth.js';
import { arrive, CLI_CALLBACK, clientOf, counts, startWorld, toCallback, type World } from './harness.js';

let w: World;
beforeAll(async () => {
  w = await startWorld();
}, 60_000);
afterAll(async () => {
  await w?.close();
});

function victimIdentity(): string {
  const subject = `victim-${randomUUID().slice(0, 8)}`;
  w.idp.accounts.set(subject, { email: `${subject}@idp.example.test`, email_verified: true });
  return subject;
}

it("links nothing when the attacker's link flow is finished in the victim's browser", async () => {
  const { session } = await newAccount(w.app, w.smtp, 'attacker');
  const attacker = clientOf(w.app, session.token);
  const callback = await toCallback(w, victimIdentity(), { link: attacker });
  const before = await counts(w.app);
  const answer = await arrive(w.app, callback, 'text/html,*/*', { otherBrowser: true });
  expect(answer.status).toBe(307);
  expect(Object.fromEntries(answer.location!.searchParams)).toEqual({ error: 'login_failed' });
  expect(await attacker.oauthAccountList()).toEqual([]);
  expect(await counts(w.app)).toEqual(before);
  // The flow is spent: the attacker's own browser cannot finish it afterwards either.
  const again = await arrive(w.app, callback);
  expect(Object.fromEntries(again.location!.searchParams)).toEqual({ error: 'login_failed' });
  expect(await attacker.oauthAccountList()).toEqual([]);
});

it("hands out no key when the attacker's sign-in flow is finished in the victim's browser", async () => {
  const callback = await toCallback(w, victimIdentity());
  const before = await counts(w.app);
  const answer = await arrive(w.app, callback, 'text/html,*/*', { otherBrowser: true });
  expect(Object.fromEntries(answer.location!.searchParams)).toEqual({ error: 'login_failed' });
  expect(await counts(w.app)).toEqual(before);
});

it('signs in through the browser that started the flow, and exempts only a loopback redirect (svcctl)', async () => {
  const own = await arrive(w.app, await toCallback(w, victimIdentity()));
  expect(own.location!.searchParams.get('key')).toBeTruthy();
  const cli = await arrive(w.app, await toCallback(w, victimIdentity(), { redirectTo: CLI_CALLBACK }), 'text/html,*/*', {
    otherBrowser: true,
  });
  expect(cli.location!.origin + cli.location!.pathname).toBe(CLI_CALLBACK);
  expect(cli.location!.searchParams.get('key')).toBeTruthy();
});
