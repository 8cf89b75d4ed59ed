// POST /application-delegations (document 1, "Delegation mint answer", "Personal API tokens and
// delegations"; DECISIONS.md §4 "Delegations"): an application, as itself, presents an access token of
// a user's live session and obtains (or re-scopes) that user's delegation. The session token is data
// the service verifies itself; anything but a live one is 401 invalid-credentials and writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { outcome, refusal } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import {
  countOf,
  delegationsOf,
  person,
  personalToken,
  registerApplication,
  staff,
  type Application,
  type Staff,
} from '../applications/fixtures.js';

let app: TestApp;
let smtp: TestSmtp;
let registrar: Staff;
let panel: Application;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  registrar = await staff(app, smtp, 'registrar', ['manage_applications']);
  panel = await registerApplication(app, registrar, [], 'Game panel');
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

describe('minting a delegation', () => {
  it('answers 200 {id, user_id}; the user then lists it; a second mint replaces its scope', async () => {
    const user = await person(app, smtp, 'minter');
    const answer = await panel.api.applicationDelegationMint({
      body: { session_token: user.token, capabilities: ['projects.read', 'me.read'] },
    });
    const [row] = await delegationsOf(app, user.id);
    expect(answer).toEqual({ id: row!.id, user_id: user.id });
    expect(await user.api.meDelegationList()).toEqual([
      expect.objectContaining({
        id: answer.id,
        application: { id: panel.id, name: 'Game panel' },
        capabilities: ['me.read', 'projects.read'],
        status: 'live',
      }),
    ]);

    app.clock.advance(1000);
    const again = await panel.api.applicationDelegationMint({
      body: { session_token: user.token, capabilities: ['organizations.read'] },
    });
    expect(again).toEqual(answer);
    expect(await delegationsOf(app, user.id)).toEqual([
      { ...row, capabilities: ['organizations.read'], updated_at: app.clock.now() },
    ]);
  });

  it('revives a delegation the user revoked', async () => {
    const user = await person(app, smtp, 'revoked-minter');
    const { id } = await panel.api.applicationDelegationMint({
      body: { session_token: user.token, capabilities: ['me.read'] },
    });
    await user.api.meDelegationRevoke({ path: { delegation_id: id } });
    expect(
      await panel.api.applicationDelegationMint({
        body: { session_token: user.token, capabilities: ['me.read'] },
      }),
    ).toEqual({
      id,
      user_id: user.id,
    });
    expect((await delegationsOf(app, user.id))[0]?.revoked_at).toBeNull();
  });
});

describe('refusals', () => {
  it('refuses an admin-only capability (400), writing nothing', async () => {
    const user = await person(app, smtp, 'admin-only');
    const e = await refusal(
      panel.api.applicationDelegationMint({
        body: { session_token: user.token, capabilities: ['me.read', 'users.lookup.oauth'] },
      }),
    );
    expect([e.status, e.code, e.errors[0]?.pointer]).toEqual([400, 'invalid-field-value', '/capabilities/1']);
    expect(await delegationsOf(app, user.id)).toEqual([]);
  });

  it('refuses the token of a signed-out session and a garbage string with 401 invalid-credentials', async () => {
    const user = await person(app, smtp, 'signed-out');
    await user.api.authLogout({ body: { refresh_token: user.session.refresh_token } });
    const before = await countOf(app, 'application_delegations');
    for (const session_token of [user.token, 'not-a-token', `${user.token.slice(0, -4)}AAAA`]) {
      expect(
        await outcome(
          panel.api.applicationDelegationMint({ body: { session_token, capabilities: ['me.read'] } }),
        ),
      ).toEqual([401, 'invalid-credentials']);
    }
    expect(await countOf(app, 'application_delegations')).toBe(before);
  });

  it('refuses a user session and a personal API token (403 forbidden), writing nothing', async () => {
    const user = await person(app, smtp, 'not-an-app');
    const token = await personalToken(app, user, ['me.read', 'me.manage']);
    const body = { session_token: user.token, capabilities: ['me.read' as const] };
    expect(await outcome(user.api.applicationDelegationMint({ body }))).toEqual([403, 'forbidden']);
    expect(await outcome(token.api.applicationDelegationMint({ body }))).toEqual([403, 'forbidden']);
    expect(await delegationsOf(app, user.id)).toEqual([]);
  });

  it('refuses an application acting as a user, even one with a live delegation (403 forbidden)', async () => {
    const user = await person(app, smtp, 'acting');
    const other = await person(app, smtp, 'acting-other');
    await panel.api.applicationDelegationMint({
      body: { session_token: user.token, capabilities: ['me.read'] },
    });
    const before = await countOf(app, 'application_delegations');
    const e = await refusal(
      panel.api
        .actingAs(user.id)
        .applicationDelegationMint({ body: { session_token: other.token, capabilities: ['me.read'] } }),
    );
    // Refused for the caller kind, not for a missing delegation (the user has a live one).
    expect([e.status, e.code]).toEqual([403, 'forbidden']);
    expect(e.detail).toMatch(/acting as a user may not/);
    expect(await countOf(app, 'application_delegations')).toBe(before);
    expect(await delegationsOf(app, other.id)).toEqual([]);
  });

  // Last: moving the clock past the access tokens' 15 minutes ends every session token of this file.
  it('refuses an expired access token with 401 invalid-credentials', async () => {
    const user = await person(app, smtp, 'expired');
    expect(await outcome(user.api.meGet())).toBe('ok');
    app.clock.advance(15 * 60 * 1000 + 1000);
    expect(await outcome(user.api.meGet())).toEqual([401, 'unauthenticated']);
    const before = await countOf(app, 'application_delegations');
    expect(
      await outcome(
        panel.api.applicationDelegationMint({
          body: { session_token: user.token, capabilities: ['me.read'] },
        }),
      ),
    ).toEqual([401, 'invalid-credentials']);
    expect(await countOf(app, 'application_delegations')).toBe(before);
  });
});
