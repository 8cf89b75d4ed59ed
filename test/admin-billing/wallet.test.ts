// PUT /admin/organizations/{id}/wallet (DECISIONS.md §4, `manage_billing`), end to end: the wallet staff
// set is what GET /organizations/{organization_id}/standing reads, in exact decimal strings. Every
// refusal is read back: nothing changed.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOf, contentState, staffMember, staffToken, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let staff: Staff;
/** Elevated, holding every staff permission but manage_billing. */
let other: Staff;
let owner: Caller;
let member: Caller;
let orgId: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  staff = await staffMember(app, smtp, 'billing-staff', ['manage_billing']);
  other = await staffMember(app, smtp, 'billing-other', [
    'manage_users',
    'manage_public_content',
    'manage_services',
  ]);
  owner = await signedIn(app, smtp, 'billing-owner');
  member = await signedIn(app, smtp, 'billing-member');
  orgId = (
    await owner.api.organizationCreate({
      body: { name: 'Funded', slug: `funded-${Date.now().toString(36)}` },
    })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: member.userId, role: 'member' } });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const standing = (c: Caller) => c.api.organizationStandingGet({ path: { organization_id: orgId } });
const ZERO = { balance: '0', reservations: '0', floor: '0', credit_limit: '0', open_receivables: '0' };

describe('PUT /admin/organizations/{id}/wallet', () => {
  it('sets the wallet the standing reads, as exact decimal strings, and records who did it', async () => {
    const answer = await staff.elevated.adminOrganizationWalletSet({
      path: { id: orgId },
      body: {
        balance: '1234567890.1',
        reservations: '0.20',
        floor: '0.3',
        credit_limit: '100',
        open_receivables: '0.05',
      },
    });
    expect(answer).toEqual({
      organization_id: orgId,
      currency: 'EUR',
      balance: '1234567890.10',
      reservations: '0.20',
      floor: '0.30',
      credit_limit: '100.00',
      open_receivables: '0.05',
      restricted: false,
      updated_at: app.clock.now().toISOString(),
    });
    expect(await standing(owner)).toEqual({
      restricted: false,
      message: null,
      detail: {
        currency: 'EUR',
        balance: '1234567890.10',
        reservations: '0.20',
        floor: '0.30',
        credit_limit: '100.00',
        open_receivables: '0.05',
      },
    });
    const [event] = await app.sql<
      { action: string; organization_id: string; details: Record<string, unknown> }[]
    >`
      select action, organization_id, details from platform_events where action = 'wallet.set' and organization_id = ${orgId}`;
    expect(event).toEqual({
      action: 'wallet.set',
      organization_id: orgId,
      details: {
        before: null,
        after: {
          balance: '1234567890.10',
          reservations: '0.20',
          floor: '0.30',
          credit_limit: '100.00',
          open_receivables: '0.05',
        },
        currency: 'EUR',
        actor_user_id: staff.id,
        actor_token_id: null,
      },
    });
  });

  it('restricts the organization when the funds fall below the floor, and lifts it again', async () => {
    const set = (w: Partial<typeof ZERO>) =>
      staff.elevated.adminOrganizationWalletSet({ path: { id: orgId }, body: { ...ZERO, ...w } });
    expect((await set({ balance: '-50', credit_limit: '20', open_receivables: '3' })).restricted).toBe(true);
    const own = await standing(owner);
    expect(own.restricted).toBe(true);
    expect(own.message).toContain('33.00 EUR');
    expect(await standing(member)).toEqual({ restricted: true, message: expect.any(String), detail: null });
    expect((await set({ balance: '0.01' })).restricted).toBe(false);
    expect(await standing(member)).toEqual({ restricted: false, message: null, detail: null });
  });

  it('refuses callers, amounts and unknown organizations it must, changing nothing', async () => {
    const before = await contentState(app);
    const path = { id: orgId };
    const body = { ...ZERO, balance: '999' };
    const cases: [string, () => Promise<unknown>, [number, string]][] = [
      ['anonymous', () => clientOf(app).adminOrganizationWalletSet({ path, body }), [401, 'unauthenticated']],
      [
        'un-elevated',
        () => staff.plain.adminOrganizationWalletSet({ path, body }),
        [403, 'elevation-required'],
      ],
      [
        'without manage_billing',
        () => other.elevated.adminOrganizationWalletSet({ path, body }),
        [403, 'forbidden'],
      ],
      // The organization's own owner is no staff: it holds no system permission, so no elevation would help.
      ['the owner', () => owner.api.adminOrganizationWalletSet({ path, body }), [403, 'forbidden']],
      [
        'unknown organization',
        () => staff.elevated.adminOrganizationWalletSet({ path: { id: randomUUID() }, body }),
        [404, 'not-found'],
      ],
      [
        'not a uuid',
        () => staff.elevated.adminOrganizationWalletSet({ path: { id: 'acme' }, body }),
        [400, 'invalid-request'],
      ],
      [
        'missing field',
        () => staff.elevated.adminOrganizationWalletSet({ path, body: { balance: '1' } as never }),
        [400, 'invalid-request'],
      ],
      [
        'unknown field',
        () =>
          staff.elevated.adminOrganizationWalletSet({ path, body: { ...body, currency: 'EUR' } as never }),
        [400, 'invalid-request'],
      ],
      ...(
        [
          ['balance', 12],
          ['balance', '1e3'],
          ['balance', '12.345'],
          ['balance', '+5'],
          ['balance', ' 5'],
          ['balance', '5.'],
          ['balance', '.5'],
          ['balance', 'NaN'],
          ['balance', '1,50'],
          ['balance', '1000000000000'],
          ['reservations', '-1'],
          ['credit_limit', '-0.01'],
          ['open_receivables', '-3'],
        ] as const
      ).map(([field, value]): [string, () => Promise<unknown>, [number, string]] => [
        `${field} ${JSON.stringify(value)}`,
        () => staff.elevated.adminOrganizationWalletSet({ path, body: { ...body, [field]: value } as never }),
        [400, 'invalid-request'],
      ]),
    ];
    for (const [name, call, want] of cases) expect(await outcome(call()), name).toEqual(want);
    expect(await contentState(app)).toEqual(before);
  });

  it('lets an admin-authorized API token with admin.billing.manage set it; admin.public_content.manage does not', async () => {
    const ops = await staffToken(app, staff, ['admin.billing.manage']);
    const answer = await ops.adminOrganizationWalletSet({
      path: { id: orgId },
      body: { ...ZERO, balance: '42' },
    });
    expect(answer.balance).toBe('42.00');
    expect((await standing(owner)).detail?.balance).toBe('42.00');

    const before = await contentState(app);
    const content = await staffToken(app, other, ['admin.public_content.manage']);
    expect(await outcome(content.adminOrganizationWalletSet({ path: { id: orgId }, body: ZERO }))).toEqual([
      403,
      'forbidden',
    ]);
    expect(await contentState(app)).toEqual(before);
  });
});
