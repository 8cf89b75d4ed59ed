// Project stats (seed document 1, "Project stats"): live subscriptions and what the project is charged
// for the service window now, under a frozen clock; and GET /projects/stats in one statement whatever
// the number of projects.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { outcome } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import {
  insertSubscription,
  personalOrganization,
  signedIn,
  teamOrganization,
  type Caller,
} from './fixtures.js';

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller, member: Caller, outsider: Caller;
let team: string;
let start: Date;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  start = app.clock.now();
  [owner, member, outsider] = (await Promise.all(
    ['owner', 'member', 'outsider'].map((tag) => signedIn(app, smtp, tag)),
  )) as [Caller, Caller, Caller];
  team = await teamOrganization(app, [
    [owner.userId, 'owner'],
    [member.userId, 'member'],
  ]);
});
// Access tokens live 15 minutes on this clock: every test moves it by less and puts it back.
afterEach(() => app.clock.set(start));
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const at = (ms: number) => new Date(start.getTime() + ms);

let counter = 0;
const create = (name: string, organizationId = team) =>
  owner.api.projectCreate({
    path: { id: organizationId },
    body: { name, slug: `s-${(counter += 1)}`, description: null },
  });

describe('GET /projects/{id}/stats', () => {
  it('counts live subscriptions and sums, per currency, those whose window holds now', async () => {
    const project = await create('Charged');
    const subscriptions: [string, Parameters<typeof insertSubscription>[2]][] = [
      ['ends exactly 5 minutes on (exclusive end)', { price: '10.00', window: [at(-DAY), at(5 * MINUTE)] }],
      [
        'starts exactly 5 minutes on (inclusive start)',
        { price: '2.50', window: [at(5 * MINUTE), at(30 * DAY)] },
      ],
      ['suspended, still charged', { status: 'suspended', price: '1.25', window: [at(-DAY), at(30 * DAY)] }],
      ['ended: held, not charged', { status: 'ended', price: '100.00', window: [at(-DAY), at(30 * DAY)] }],
      ['no window: held, not charged', { price: '7.00', window: null }],
      ['USD, a float trap', { currency: 'USD', price: '0.10', window: [at(-DAY), at(DAY)] }],
      ['USD, a float trap', { currency: 'USD', price: '0.20', window: [at(-DAY), at(DAY)] }],
      ['USD, a float trap', { currency: 'USD', price: '3.00', window: [at(-DAY), at(DAY)] }],
      ['window over', { price: '50.00', window: [at(-30 * DAY), at(-DAY)] }],
    ];
    for (const [, s] of subscriptions) await insertSubscription(app, project.id, s);
    // Deleted ones count for nothing.
    await insertSubscription(app, project.id, {
      deleted: true,
      price: '1000.00',
      window: [at(-DAY), at(30 * DAY)],
    });
    await insertSubscription(app, project.id, {
      deleted: true,
      status: 'ended',
      currency: 'GBP',
      window: [at(-DAY), at(DAY)],
    });

    const stats = () => owner.api.projectStatsGet({ path: { id: project.id } });
    const expected = (eur: string) => ({
      project_id: project.id,
      resource_count: subscriptions.length,
      cycle_spend: [
        { currency: 'EUR', amount: eur },
        // 0.1 + 0.2 + 3 is 3.3000000000000003 in floating point.
        { currency: 'USD', amount: '3.30' },
      ],
    });

    expect(await stats()).toEqual(expected('11.25'));
    app.clock.set(at(5 * MINUTE - 1));
    expect(await stats()).toEqual(expected('11.25'));
    app.clock.set(at(5 * MINUTE));
    expect(await stats()).toEqual(expected('3.75'));
    // A member reads the same.
    expect(await member.api.projectStatsGet({ path: { id: project.id } })).toEqual(expected('3.75'));
  });

  it('answers zero and an empty array for a project holding nothing under a live window', async () => {
    const empty = await create('Empty');
    expect(await owner.api.projectStatsGet({ path: { id: empty.id } })).toEqual({
      project_id: empty.id,
      resource_count: 0,
      cycle_spend: [],
    });
    const ended = await create('Only ended');
    await insertSubscription(app, ended.id, { status: 'ended', window: [at(-DAY), at(DAY)] });
    expect(await owner.api.projectStatsGet({ path: { id: ended.id } })).toEqual({
      project_id: ended.id,
      resource_count: 1,
      cycle_spend: [],
    });
  });

  it('answers 404 for a project of an organization the caller is not in, as for an unknown id', async () => {
    const project = await create('Private');
    await insertSubscription(app, project.id, { window: [at(-DAY), at(DAY)] });
    expect(await outcome(outsider.api.projectStatsGet({ path: { id: project.id } }))).toEqual([
      404,
      'not-found',
    ]);
    expect(await outcome(outsider.api.projectStatsGet({ path: { id: randomUUID() } }))).toEqual([
      404,
      'not-found',
    ]);
  });
});

describe('GET /projects/stats', () => {
  it('answers stats for exactly the projects GET /projects returns, in the same order', async () => {
    const me = await signedIn(app, smtp, 'lister');
    const org = await teamOrganization(
      app,
      [
        [owner.userId, 'owner'],
        [me.userId, 'billing'],
      ],
      'Shared',
    );
    const project = await create('Shared project', org);
    await insertSubscription(app, project.id, { price: '4.00', window: [at(-DAY), at(DAY)] });
    const projects = await me.api.projectList();
    const stats = await me.api.projectStatsList();
    expect(stats.map((s) => s.project_id)).toEqual(projects.map((p) => p.id));
    expect(projects.map((p) => p.organization_id)).toEqual([await personalOrganization(app, me.userId), org]);
    expect(stats[1]).toEqual({
      project_id: project.id,
      resource_count: 1,
      cycle_spend: [{ currency: 'EUR', amount: '4.00' }],
    });
    expect(stats[1]).toEqual(await me.api.projectStatsGet({ path: { id: project.id } }));
  });

  it('reads every project in one statement: 1 project or 31 cost the same statements', async () => {
    const me = await signedIn(app, smtp, 'many');
    // postgres.js calls `debug` for every statement it sends, reading it from the options at that
    // moment: so the test sees each statement the server runs, on every pooled connection.
    const options = app.sql.options as unknown as { debug: unknown };
    const statementsOf = async () => {
      const seen: string[] = [];
      options.debug = (_connection: number, query: string) => seen.push(query);
      try {
        const stats = await me.api.projectStatsList();
        return { stats, seen: seen.filter((q) => /\bprojects\b|\bsubscriptions\b/.test(q)) };
      } finally {
        options.debug = false;
      }
    };

    const one = await statementsOf();
    expect(one.stats).toHaveLength(1);

    const org = await teamOrganization(app, [[me.userId, 'owner']], 'Many');
    for (let i = 0; i < 30; i += 1) {
      const project = await me.api.projectCreate({
        path: { id: org },
        body: { name: `P${i}`, slug: `many-${i}`, description: null },
      });
      await insertSubscription(app, project.id, { price: '1.00', window: [at(-DAY), at(DAY)] });
    }
    const many = await statementsOf();
    expect(many.stats).toHaveLength(31);
    expect(
      many.stats.slice(1).every((s) => s.resource_count === 1 && s.cycle_spend[0]?.amount === '1.00'),
    ).toBe(true);

    expect(one.seen).toHaveLength(1);
    expect(many.seen).toEqual(one.seen);
  });
});
