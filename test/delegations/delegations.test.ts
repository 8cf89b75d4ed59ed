// A user's own delegations (document 1, "Application delegation", "Personal API tokens and
// delegations"; DECISIONS.md §4 "Delegations"): GET, POST /me/application-delegations and DELETE
// /me/application-delegations/{delegation_id}, with a full session only. One delegation per
// application and user: granting again replaces its scope and revives a revoked one.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { outcome, refusal } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import {
  delegationsOf,
  person,
  personalToken,
  registerApplication,
  staff,
  type Application,
  type Capability,
  type Person,
  type Staff,
} from '../applications/fixtures.js';

let app: TestApp;
let smtp: TestSmtp;
let registrar: Staff;
let panel: Application, bot: Application;
const names = { panel: 'Game panel', bot: 'Chat bot' };

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  registrar = await staff(app, smtp, 'registrar', ['manage_applications']);
  panel = await registerApplication(app, registrar, [], names.panel);
  bot = await registerApplication(app, registrar, [], names.bot);
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const grant = (p: Person, application_id: string, capabilities: Capability[]) =>
  p.api.meDelegationGrant({ body: { application_id, capabilities } });

/** A plain request, to see the status and the (empty) body the SDK would hide. */
async function send(p: Person, method: string, path: string, body?: unknown) {
  const res = await fetch(`${app.baseUrl}/api/v2${path}`, {
    method,
    headers: {
      authorization: `Bearer ${p.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

describe('granting and listing', () => {
  it('answers 204, then lists every delegation with its fields, newest first', async () => {
    const user = await person(app, smtp, 'lister');
    const first = app.clock.now().toISOString();
    const granted = await send(user, 'POST', '/me/application-delegations', {
      application_id: panel.id,
      capabilities: ['projects.read', 'me.read'],
    });
    expect(granted).toEqual({ status: 204, text: '' });
    app.clock.advance(1000);
    const second = app.clock.now().toISOString();
    await grant(user, bot.id, ['organizations.read']);

    const [botRow, panelRow] = [...(await delegationsOf(app, user.id))].reverse();
    expect(await user.api.meDelegationList()).toEqual([
      {
        id: botRow!.id,
        application: { id: bot.id, name: names.bot },
        capabilities: ['organizations.read'],
        status: 'live',
        created_at: second,
        updated_at: second,
        last_used_at: null,
        revoked_at: null,
      },
      {
        id: panelRow!.id,
        application: { id: panel.id, name: names.panel },
        capabilities: ['me.read', 'projects.read'],
        status: 'live',
        created_at: first,
        updated_at: first,
        last_used_at: null,
        revoked_at: null,
      },
    ]);
    // Only the caller's own.
    const stranger = await person(app, smtp, 'stranger');
    expect(await stranger.api.meDelegationList()).toEqual([]);
  });

  it('replaces the scope on a second grant: still one delegation, created_at kept, updated_at moved', async () => {
    const user = await person(app, smtp, 'replacer');
    const created = app.clock.now();
    await grant(user, panel.id, ['me.read', 'projects.manage']);
    const [before] = await delegationsOf(app, user.id);
    app.clock.advance(5000);
    await grant(user, panel.id, ['organizations.read']);
    const rows = await delegationsOf(app, user.id);
    expect(rows).toEqual([
      { ...before, capabilities: ['organizations.read'], created_at: created, updated_at: app.clock.now() },
    ]);
    const [listed] = await user.api.meDelegationList();
    expect(listed).toMatchObject({
      id: before!.id,
      capabilities: ['organizations.read'],
      created_at: created.toISOString(),
      updated_at: app.clock.now().toISOString(),
    });
  });
});

describe('revoking', () => {
  it('answers 204 and lists the delegation as revoked, with its time', async () => {
    const user = await person(app, smtp, 'revoker');
    await grant(user, panel.id, ['me.read']);
    const [row] = await delegationsOf(app, user.id);
    app.clock.advance(1000);
    expect(await send(user, 'DELETE', `/me/application-delegations/${row!.id}`)).toEqual({
      status: 204,
      text: '',
    });
    expect(await user.api.meDelegationList()).toEqual([
      expect.objectContaining({ id: row!.id, status: 'revoked', revoked_at: app.clock.now().toISOString() }),
    ]);
  });

  it("answers the same 404 for a revoked, another account's and an unknown delegation, changing nothing", async () => {
    const user = await person(app, smtp, 'revoker-404');
    const owner = await person(app, smtp, 'other-owner');
    await grant(user, panel.id, ['me.read']);
    await grant(owner, panel.id, ['me.read']);
    const [mine] = await delegationsOf(app, user.id);
    await user.api.meDelegationRevoke({ path: { delegation_id: mine!.id } });
    const [theirs] = await delegationsOf(app, owner.id);
    const mineAfter = await delegationsOf(app, user.id);

    const answers = [];
    for (const delegation_id of [mine!.id, theirs!.id, randomUUID()]) {
      const e = await refusal(user.api.meDelegationRevoke({ path: { delegation_id } }));
      answers.push([e.status, e.code, e.detail]);
    }
    expect(answers[0]).toEqual([404, 'not-found', expect.any(String)]);
    expect(answers).toEqual([answers[0], answers[0], answers[0]]);
    expect(await delegationsOf(app, owner.id)).toEqual([theirs]);
    expect(await delegationsOf(app, user.id)).toEqual(mineAfter);
  });

  it('revives a revoked delegation when granted again: the same id, live, with the new scope', async () => {
    const user = await person(app, smtp, 'reviver');
    await grant(user, panel.id, ['me.read']);
    const [row] = await delegationsOf(app, user.id);
    await user.api.meDelegationRevoke({ path: { delegation_id: row!.id } });
    app.clock.advance(1000);
    await grant(user, panel.id, ['projects.read']);
    expect(await user.api.meDelegationList()).toEqual([
      expect.objectContaining({
        id: row!.id,
        status: 'live',
        capabilities: ['projects.read'],
        revoked_at: null,
      }),
    ]);
  });
});

describe('refusals', () => {
  it('refuses an unknown application (404), an unknown or admin-only capability (400), writing nothing', async () => {
    const user = await person(app, smtp, 'refused');
    const cases: [string, () => Promise<unknown>, [number, string, string?]][] = [
      ['unknown application', () => grant(user, randomUUID(), ['me.read']), [404, 'not-found']],
      [
        'unknown capability',
        () => grant(user, panel.id, ['me.read', 'me.delete']),
        [400, 'invalid-field-value', '/capabilities/1'],
      ],
      [
        'admin-only capability',
        () => grant(user, panel.id, ['users.read.public']),
        [400, 'invalid-field-value', '/capabilities/0'],
      ],
      [
        'another admin-only capability',
        () => grant(user, panel.id, ['me.read', 'admin.applications.manage']),
        [400, 'invalid-field-value', '/capabilities/1'],
      ],
    ];
    for (const [name, call, want] of cases) {
      const e = await refusal(call());
      const got = e.status === 400 ? [e.status, e.code, e.errors[0]?.pointer] : [e.status, e.code];
      expect([name, got]).toEqual([name, want]);
    }
    expect(await delegationsOf(app, user.id)).toEqual([]);
  });

  it('refuses a personal API token on all three routes (403 forbidden), changing nothing', async () => {
    const user = await person(app, smtp, 'token-holder');
    await grant(user, bot.id, ['me.read']);
    const before = await delegationsOf(app, user.id);
    const token = await personalToken(app, user, ['me.read', 'me.manage']);
    expect(
      await outcome(
        token.api.meDelegationGrant({ body: { application_id: panel.id, capabilities: ['me.read'] } }),
      ),
    ).toEqual([403, 'forbidden']);
    expect(await outcome(token.api.meDelegationList())).toEqual([403, 'forbidden']);
    expect(await outcome(token.api.meDelegationRevoke({ path: { delegation_id: before[0]!.id } }))).toEqual([
      403,
      'forbidden',
    ]);
    expect(await delegationsOf(app, user.id)).toEqual(before);
  });
});
