// Staff routes for incidents and maintenance windows (DECISIONS.md §4, `manage_public_content`), end
// to end: what staff open, change, resolve, schedule and cancel is what GET /public/incidents and GET
// /public/maintenances answer. Every refusal is read back: nothing changed.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { outcome } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { clientOf, contentState, staffMember, staffToken, type Staff } from './staff.js';

let app: TestApp;
let smtp: TestSmtp;
let staff: Staff;
/** Elevated, but holding every staff permission except manage_public_content. */
let other: Staff;
const anonymous = () => clientOf(app);

const HOUR = 60 * 60 * 1000;
const MINUTE = 60 * 1000;
// The clock is frozen and the staff sessions' access tokens last 15 minutes: this file moves it by
// seconds and minutes only, a few in all.

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  staff = await staffMember(app, smtp, 'content-staff', ['manage_public_content']);
  other = await staffMember(app, smtp, 'content-other', [
    'manage_users',
    'manage_billing',
    'manage_applications',
  ]);
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const events = (targetId: string) =>
  app.sql<{ action: string; details: Record<string, unknown> }[]>`
    select action, details from platform_events where target_id = ${targetId} order by created_at, id`;

describe('incidents', () => {
  it('opens an incident the public list shows, updates it, and resolving takes it off the list', async () => {
    const now = app.clock.now();
    const opened = await staff.elevated.adminIncidentCreate({
      body: { title: '  API errors  ', message: 'Some requests fail.\nWe are on it.' },
    });
    expect(opened).toEqual({
      id: expect.any(String),
      title: 'API errors',
      message: 'Some requests fail.\nWe are on it.',
      started_at: now.toISOString(),
      resolved_at: null,
    });
    const older = await staff.elevated.adminIncidentCreate({
      body: { title: 'Slow consoles', started_at: new Date(now.getTime() - HOUR).toISOString() },
    });
    expect(older.message).toBeNull();
    const publicList = () => anonymous().publicIncidentsList();
    // Oldest first.
    expect((await publicList()).map((i) => i.id)).toEqual([older.id, opened.id]);

    app.clock.advance(1000);
    const updated = await staff.elevated.adminIncidentUpdate({
      path: { id: opened.id },
      body: { title: 'API errors in eu-1', message: null },
    });
    expect(updated).toEqual({ ...opened, title: 'API errors in eu-1', message: null });
    expect((await publicList()).find((i) => i.id === opened.id)).toEqual({
      id: opened.id,
      title: 'API errors in eu-1',
      started_at: opened.started_at,
      message: null,
    });

    app.clock.advance(MINUTE);
    const resolved = await staff.elevated.adminIncidentResolve({ path: { id: opened.id } });
    expect(resolved.resolved_at).toBe(app.clock.now().toISOString());
    expect((await publicList()).map((i) => i.id)).toEqual([older.id]);
    // Again: nothing changes, the first resolution stands.
    app.clock.advance(1000);
    expect(await staff.elevated.adminIncidentResolve({ path: { id: opened.id } })).toEqual(resolved);

    const recorded = await events(opened.id);
    expect(recorded.map((e) => e.action)).toEqual([
      'incident.opened',
      'incident.updated',
      'incident.resolved',
    ]);
    expect(recorded.every((e) => e.details.actor_user_id === staff.id)).toBe(true);
    expect(recorded[1]!.details.changed).toEqual(['title', 'message']);
  });

  it('keeps an incident that starts later off the public list until it starts', async () => {
    const later = await staff.elevated.adminIncidentCreate({
      body: {
        title: 'Planned outage',
        started_at: new Date(app.clock.now().getTime() + MINUTE).toISOString(),
      },
    });
    expect((await anonymous().publicIncidentsList()).map((i) => i.id)).not.toContain(later.id);
    app.clock.advance(MINUTE);
    expect((await anonymous().publicIncidentsList()).map((i) => i.id)).toContain(later.id);
    await staff.elevated.adminIncidentResolve({ path: { id: later.id } });
  });

  it('records nothing for an update that changes nothing', async () => {
    const i = await staff.elevated.adminIncidentCreate({ body: { title: 'Same' } });
    expect(await staff.elevated.adminIncidentUpdate({ path: { id: i.id }, body: {} })).toEqual(i);
    expect(
      await staff.elevated.adminIncidentUpdate({ path: { id: i.id }, body: { title: 'Same ' } }),
    ).toEqual(i);
    expect((await events(i.id)).map((e) => e.action)).toEqual(['incident.opened']);
  });

  it('refuses callers and bodies it must, changing nothing', async () => {
    const existing = await staff.elevated.adminIncidentCreate({ body: { title: 'Existing' } });
    await staff.elevated.adminIncidentResolve({ path: { id: existing.id } });
    const before = await contentState(app);
    const body = { title: 'Nope' };
    const cases: [string, () => Promise<unknown>, [number, string]][] = [
      ['anonymous create', () => anonymous().adminIncidentCreate({ body }), [401, 'unauthenticated']],
      ['un-elevated create', () => staff.plain.adminIncidentCreate({ body }), [403, 'elevation-required']],
      [
        'create without the permission',
        () => other.elevated.adminIncidentCreate({ body }),
        [403, 'forbidden'],
      ],
      [
        'anonymous update',
        () => anonymous().adminIncidentUpdate({ path: { id: existing.id }, body }),
        [401, 'unauthenticated'],
      ],
      [
        'un-elevated update',
        () => staff.plain.adminIncidentUpdate({ path: { id: existing.id }, body }),
        [403, 'elevation-required'],
      ],
      [
        'update without the permission',
        () => other.elevated.adminIncidentUpdate({ path: { id: existing.id }, body }),
        [403, 'forbidden'],
      ],
      [
        'un-elevated resolve',
        () => staff.plain.adminIncidentResolve({ path: { id: randomUUID() } }),
        [403, 'elevation-required'],
      ],
      [
        'resolve without the permission',
        () => other.elevated.adminIncidentResolve({ path: { id: randomUUID() } }),
        [403, 'forbidden'],
      ],
      [
        'unknown field',
        () => staff.elevated.adminIncidentCreate({ body: { ...body, severity: 'high' } as never }),
        [400, 'invalid-request'],
      ],
      ['no title', () => staff.elevated.adminIncidentCreate({ body: {} as never }), [400, 'invalid-request']],
      [
        'blank title',
        () => staff.elevated.adminIncidentCreate({ body: { title: '   ' } }),
        [400, 'invalid-field-value'],
      ],
      [
        'control character',
        () => staff.elevated.adminIncidentCreate({ body: { title: 'a\u0007b' } }),
        [400, 'invalid-field-value'],
      ],
      [
        'bad time',
        () => staff.elevated.adminIncidentCreate({ body: { title: 'x', started_at: 'yesterday' } }),
        [400, 'invalid-request'],
      ],
      [
        'long message',
        () => staff.elevated.adminIncidentCreate({ body: { title: 'x', message: 'm'.repeat(4001) } }),
        [400, 'invalid-request'],
      ],
      [
        'unknown incident update',
        () => staff.elevated.adminIncidentUpdate({ path: { id: randomUUID() }, body }),
        [404, 'not-found'],
      ],
      [
        'unknown incident resolve',
        () => staff.elevated.adminIncidentResolve({ path: { id: randomUUID() } }),
        [404, 'not-found'],
      ],
      [
        'start after resolution',
        () =>
          staff.elevated.adminIncidentUpdate({
            path: { id: existing.id },
            body: { started_at: new Date(app.clock.now().getTime() + HOUR).toISOString() },
          }),
        [400, 'invalid-field-value'],
      ],
    ];
    for (const [name, call, want] of cases) expect(await outcome(call()), name).toEqual(want);
    expect(await contentState(app)).toEqual(before);
  });

  it('lets an admin-authorized API token with admin.public_content.manage do it, and no other token', async () => {
    const ops = await staffToken(app, staff, ['admin.public_content.manage']);
    const i = await ops.adminIncidentCreate({ body: { title: 'Through a token' } });
    expect((await anonymous().publicIncidentsList()).map((x) => x.id)).toContain(i.id);
    const [e] = await events(i.id);
    expect(e!.details).toMatchObject({ actor_user_id: staff.id, actor_token_id: expect.any(String) });
    await ops.adminIncidentResolve({ path: { id: i.id } });

    const before = await contentState(app);
    const billing = await staffToken(app, other, ['admin.billing.manage']);
    expect(await outcome(billing.adminIncidentCreate({ body: { title: 'x' } }))).toEqual([403, 'forbidden']);
    // The capability is staff power only while its owner holds the permission.
    await app.sql`update users set system_permissions = '{}' where id = ${staff.id}`;
    expect(await outcome(ops.adminIncidentCreate({ body: { title: 'x' } }))).toEqual([403, 'forbidden']);
    await app.sql`update users set system_permissions = '{manage_public_content}' where id = ${staff.id}`;
    expect(await contentState(app)).toEqual(before);
  });
});

describe('maintenance windows', () => {
  it('schedules a window the public list shows, soonest first, and cancelling takes it off', async () => {
    const at = (hours: number) => new Date(app.clock.now().getTime() + hours * HOUR).toISOString();
    const later = await staff.elevated.adminMaintenanceCreate({
      body: { title: 'Database upgrade', scheduled_at: at(48), expected_duration_minutes: 90 },
    });
    expect(later).toEqual({
      id: expect.any(String),
      title: 'Database upgrade',
      scheduled_at: at(48),
      expected_duration_minutes: 90,
      cancelled_at: null,
    });
    const sooner = await staff.elevated.adminMaintenanceCreate({
      body: { title: 'Network', scheduled_at: at(2) },
    });
    expect(sooner.expected_duration_minutes).toBeNull();
    const ids = async () => (await anonymous().publicMaintenancesList()).map((m) => m.id);
    expect(await ids()).toEqual([sooner.id, later.id]);
    expect((await anonymous().publicMaintenancesList())[1]).toEqual({
      id: later.id,
      title: 'Database upgrade',
      scheduled_at: later.scheduled_at,
      expected_duration_minutes: 90,
    });

    app.clock.advance(1000);
    const cancelled = await staff.elevated.adminMaintenanceCancel({ path: { id: sooner.id } });
    expect(cancelled).toEqual({ ...sooner, cancelled_at: app.clock.now().toISOString() });
    expect(await ids()).toEqual([later.id]);
    app.clock.advance(1000);
    expect(await staff.elevated.adminMaintenanceCancel({ path: { id: sooner.id } })).toEqual(cancelled);
    expect((await events(sooner.id)).map((e) => e.action)).toEqual([
      'maintenance.scheduled',
      'maintenance.cancelled',
    ]);
    await staff.elevated.adminMaintenanceCancel({ path: { id: later.id } });
  });

  it('refuses callers and bodies it must, changing nothing', async () => {
    const before = await contentState(app);
    const body = { title: 'Nope', scheduled_at: app.clock.now().toISOString() };
    const cases: [string, () => Promise<unknown>, [number, string]][] = [
      ['anonymous', () => anonymous().adminMaintenanceCreate({ body }), [401, 'unauthenticated']],
      ['un-elevated', () => staff.plain.adminMaintenanceCreate({ body }), [403, 'elevation-required']],
      ['without the permission', () => other.elevated.adminMaintenanceCreate({ body }), [403, 'forbidden']],
      [
        'anonymous cancel',
        () => anonymous().adminMaintenanceCancel({ path: { id: randomUUID() } }),
        [401, 'unauthenticated'],
      ],
      [
        'un-elevated cancel',
        () => staff.plain.adminMaintenanceCancel({ path: { id: randomUUID() } }),
        [403, 'elevation-required'],
      ],
      [
        'cancel without the permission',
        () => other.elevated.adminMaintenanceCancel({ path: { id: randomUUID() } }),
        [403, 'forbidden'],
      ],
      [
        'no scheduled_at',
        () => staff.elevated.adminMaintenanceCreate({ body: { title: 'x' } as never }),
        [400, 'invalid-request'],
      ],
      [
        'negative duration',
        () => staff.elevated.adminMaintenanceCreate({ body: { ...body, expected_duration_minutes: -1 } }),
        [400, 'invalid-request'],
      ],
      [
        'fractional duration',
        () => staff.elevated.adminMaintenanceCreate({ body: { ...body, expected_duration_minutes: 1.5 } }),
        [400, 'invalid-request'],
      ],
      [
        'blank title',
        () => staff.elevated.adminMaintenanceCreate({ body: { ...body, title: ' ' } }),
        [400, 'invalid-field-value'],
      ],
      [
        'unknown window',
        () => staff.elevated.adminMaintenanceCancel({ path: { id: randomUUID() } }),
        [404, 'not-found'],
      ],
      [
        'not a uuid',
        () => staff.elevated.adminMaintenanceCancel({ path: { id: 'm-1' } }),
        [400, 'invalid-request'],
      ],
    ];
    for (const [name, call, want] of cases) expect(await outcome(call()), name).toEqual(want);
    expect(await contentState(app)).toEqual(before);
  });
});
