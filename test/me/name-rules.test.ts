// One rule for every name a person gives (DECISIONS.md §7, issue 26): the sign-up name, PATCH /me, and
// organization and project names all refuse control, format, bidi and zero-width characters. A refused
// name creates nothing and mails nothing.
import { createClient, type SvcClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount, uniqueEmail } from '../support/auth.js';
import { refusal } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let me: { api: SvcClient; userId: string; organizationId: string; projectId: string };

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  const { session } = await newAccount(app, smtp, 'names');
  const api = createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0 });
  const org = await api.organizationCreate({ body: { name: 'Names Inc', slug: `names-${Date.now().toString(36)}` } });
  const project = await api.projectCreate({
    path: { id: org.id },
    body: { name: 'Site', slug: `site-${Date.now().toString(36)}` },
  });
  me = { api, userId: session.user.id, organizationId: org.id, projectId: project.id };
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

// What the outside probe sent, and its relatives: each renders as something other than what it is.
const HOSTILE: [string, string][] = [
  ['a line break and a mail header', 'Eve\r\nBcc: leak@evil.test'],
  ['a right-to-left override', 'Eve\u202Egpj.exe'],
  ['a left-to-right isolate', '\u2066Eve\u2069 Adams'],
  ['a zero-width space', 'Ev\u200Be'],
  ['a zero-width joiner', 'Eve\u200DAdams'],
  ['zero-width characters only', '\u200B\u200C\u200D'],
  ['a word joiner', 'E\u2060ve'],
  ['a soft hyphen', 'Ev\u00ADe'],
  ['a line separator', 'Eve\u2028Adams'],
  ['Hangul fillers only', '\u3164\u3164'],
  ['a bell', 'Eve\u0007'],
];

const signup = (email: string, name: string) =>
  createClient({ baseUrl: app.baseUrl, retries: 0 }).authPasswordSignup({
    body: { email, password: 'a fine passphrase', name },
  });

const counts = async () => {
  const [row] = await app.sql<{ users: number; pending: number; jobs: number; mail: number; orgs: number; projects: number }[]>`
    select (select count(*)::int from users) as users,
           (select count(*)::int from pending_signups) as pending,
           (select count(*)::int from graphile_worker.jobs where task_identifier = 'complete_signup') as jobs,
           (select count(*)::int from mail_outbox) as mail,
           (select count(*)::int from organizations) as orgs,
           (select count(*)::int from projects) as projects`;
  return row!;
};

const names = async () => {
  const [row] = await app.sql<{ user: string; org: string; project: string }[]>`
    select (select name from users where id = ${me.userId}) as user,
           (select name from organizations where id = ${me.organizationId}) as org,
           (select name from projects where id = ${me.projectId}) as project`;
  return row!;
};

describe('the one name rule', () => {
  it.each(HOSTILE)('refuses a name with %s everywhere a person gives one, changing and mailing nothing', async (_why, name) => {
    const before = { counts: await counts(), names: await names(), mails: smtp.messages.length };
    const email = uniqueEmail('hostile');
    // One at a time, each awaited as it is made.
    const attempts: [string, () => Promise<unknown>][] = [
      ['sign-up', () => signup(email, name)],
      ['PATCH /me', () => me.api.meUpdate({ body: { name } })],
      ['organization create', () => me.api.organizationCreate({ body: { name, slug: `h-${Date.now().toString(36)}` } })],
      ['organization update', () => me.api.organizationUpdate({ path: { id: me.organizationId }, body: { name } })],
      [
        'project create',
        () => me.api.projectCreate({ path: { id: me.organizationId }, body: { name, slug: `p-${Date.now().toString(36)}` } }),
      ],
      ['project update', () => me.api.projectUpdate({ path: { id: me.projectId }, body: { name } })],
    ];
    for (const [where, attempt] of attempts) {
      const err = await refusal(attempt());
      expect([where, err.status, err.code, err.errors?.[0]?.pointer]).toEqual([where, 400, 'invalid-field-value', '/name']);
    }
    expect(await counts()).toEqual(before.counts);
    expect(await names()).toEqual(before.names);
    expect(await app.sql`select 1 from users where email = ${email}`).toHaveLength(0);
    expect(smtp.messages.slice(before.mails).filter((m) => m.to.includes(email))).toHaveLength(0);
  });

  it('takes ordinary names of any script, and emoji in organization names', async () => {
    const email = uniqueEmail('zoe');
    await signup(email, '  Zoë Ångström ');
    const mail = await smtp.waitFor((m) => m.to.includes(email));
    expect(mail.subject).toBeTruthy();
    const [user] = await app.sql<{ name: string }[]>`select name from users where email = ${email}`;
    expect(user!.name).toBe('Zoë Ångström');
    expect((await me.api.meUpdate({ body: { name: 'Nguyễn Thị Minh' } })).name).toBe('Nguyễn Thị Minh');
    const org = await me.api.organizationUpdate({ path: { id: me.organizationId }, body: { name: 'Acme ❤️ 東京' } });
    expect(org.name).toBe('Acme ❤️ 東京');
    const project = await me.api.projectUpdate({ path: { id: me.projectId }, body: { name: 'Web shop (EU)' } });
    expect(project.name).toBe('Web shop (EU)');
  });
});
