// POST /auth/sudo/exit ends the session's elevation on the server (DECISIONS.md §7, issue 26): the
// elevated token handed out before no longer opens /admin/ routes, and a refresh sent with it carries
// nothing forward. Elevating again works as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOf, PIN, staffMember } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { logIn } from '../support/auth.js';
import { outcome } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const incidents = async () => (await app.sql<{ n: number }[]>`select count(*)::int as n from public_incidents`)[0]!.n;

describe('leaving elevation', () => {
  it('makes every earlier elevated token of the session un-elevated, and refresh carries nothing', async () => {
    const staff = await staffMember(app, smtp, 'exit', ['manage_public_content']);
    const elevated = staff.elevated;
    await elevated.adminIncidentCreate({ body: { title: 'Before exit' } });
    const plain = await elevated.sudoExit();
    expect(await clientOf(app, plain.token).sudoStatusGet()).toMatchObject({ is_elevated: false });

    const before = await incidents();
    expect(await outcome(elevated.adminIncidentCreate({ body: { title: 'After exit' } }))).toEqual([403, 'elevation-required']);
    expect(await elevated.sudoStatusGet()).toMatchObject({ is_elevated: false, elevated_until: null });
    expect(await incidents()).toBe(before);

    // The refresh token of the same session, sent with the earlier elevated token: no elevation.
    const [row] = await app.sql<{ email: string }[]>`select email from users where id = ${staff.id}`;
    const session = await logIn(app, smtp, row!.email, 'correct horse battery staple');
    const again = await clientOf(app, session.token).sudoElevate({ body: { pin: PIN } });
    const otherSession = clientOf(app, again.token);
    await otherSession.sudoExit();
    const refreshed = await otherSession.authRefresh({ body: { refresh_token: session.refresh_token } });
    expect(await clientOf(app, refreshed.token).sudoStatusGet()).toMatchObject({ is_elevated: false, elevated_until: null });
    expect(await outcome(clientOf(app, refreshed.token).adminIncidentCreate({ body: { title: 'Refreshed' } }))).toEqual([
      403,
      'elevation-required',
    ]);
    expect(await incidents()).toBe(before);

    // Elevating again opens a new window in the same session.
    const renewed = await clientOf(app, refreshed.token).sudoElevate({ body: { pin: PIN } });
    await clientOf(app, renewed.token).adminIncidentCreate({ body: { title: 'Elevated again' } });
    expect(await incidents()).toBe(before + 1);
  }, 90_000);

  it("ends only this session's elevation: another session's elevated token stays elevated", async () => {
    const staff = await staffMember(app, smtp, 'exit-other', ['manage_public_content']);
    const [row] = await app.sql<{ email: string }[]>`select email from users where id = ${staff.id}`;
    const second = await logIn(app, smtp, row!.email, 'correct horse battery staple');
    const secondElevated = clientOf(app, (await clientOf(app, second.token).sudoElevate({ body: { pin: PIN } })).token);
    await staff.elevated.sudoExit();
    expect(await secondElevated.sudoStatusGet()).toMatchObject({ is_elevated: true });
    await secondElevated.adminIncidentCreate({ body: { title: 'Other session' } });
  }, 90_000);
});
