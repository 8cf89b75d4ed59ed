// GET /organizations/{organization_id}/standing (seed document 1, "Organization standing"): any member;
// the breakdown for owners only; one fixed sentence for everyone else whatever the reason.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn as signIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let owner: Caller;
const members: Record<'admin' | 'billing' | 'member', Caller> = {} as never;
let orgId: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  owner = await signIn(app, smtp, 'standing');
  orgId = (await owner.api.organizationCreate({ body: { name: 'Funded', slug: `funded-${Date.now().toString(36)}` } })).id;
  for (const role of ['admin', 'billing', 'member'] as const) {
    members[role] = await signIn(app, smtp, role);
    await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: members[role].userId, role } });
  }
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const setWallet = (w: { balance: string; reservations?: string; floor?: string; credit_limit?: string; open_receivables?: string }) =>
  app.sql`
    insert into organization_wallets (organization_id, balance, reservations, floor, credit_limit, open_receivables, updated_at)
    values (${orgId}, ${w.balance}, ${w.reservations ?? '0'}, ${w.floor ?? '0'}, ${w.credit_limit ?? '0'}, ${w.open_receivables ?? '0'}, now())
    on conflict (organization_id) do update set balance = excluded.balance, reservations = excluded.reservations,
      floor = excluded.floor, credit_limit = excluded.credit_limit, open_receivables = excluded.open_receivables`;

const standing = (c: Caller) => c.api.organizationStandingGet({ path: { organization_id: orgId } });

describe('GET /organizations/{organization_id}/standing', () => {
  it('reads zeros and no restriction without a wallet', async () => {
    expect(await standing(owner)).toEqual({
      restricted: false,
      message: null,
      detail: { currency: 'EUR', balance: '0.00', reservations: '0.00', floor: '0.00', credit_limit: '0.00', open_receivables: '0.00' },
    });
    for (const m of Object.values(members)) expect(await standing(m)).toEqual({ restricted: false, message: null, detail: null });
  });

  it('gives owners the breakdown as exact decimal strings and others nothing of it', async () => {
    await setWallet({ balance: '1234567890.10', reservations: '0.20', floor: '0.30', credit_limit: '100.00', open_receivables: '0.05' });
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
    expect(await standing(members.admin)).toEqual({ restricted: false, message: null, detail: null });
  });

  it('when restricted, tells owners the shortfall and every other member one fixed sentence, whatever the reason', async () => {
    const sentences = new Set<string>();
    for (const [wallet, shortfall] of [
      [{ balance: '5.00', floor: '10.00' }, '5.00'],
      [{ balance: '100.00', reservations: '100.01' }, '0.01'],
      [{ balance: '-50.00', credit_limit: '20.00', open_receivables: '3.00' }, '33.00'],
    ] as const) {
      await setWallet(wallet);
      const own = await standing(owner);
      expect(own.restricted).toBe(true);
      expect(own.message).toContain(`${shortfall} EUR`);
      expect(own.detail).toMatchObject({ balance: wallet.balance });
      for (const m of Object.values(members)) {
        const s = await standing(m);
        expect(s).toEqual({ restricted: true, message: expect.any(String), detail: null });
        sentences.add(s.message!);
      }
    }
    expect(sentences.size).toBe(1);
    expect([...sentences][0]).not.toMatch(/\d/);
  });

  it('answers a non-member the 404 of an unknown id', async () => {
    const stranger = await signIn(app, smtp, 'stranger');
    expect(await outcome(stranger.api.organizationStandingGet({ path: { organization_id: orgId } }))).toEqual([404, 'not-found']);
  });
});
