// Sign-up and forgot-password do nothing that depends on the address on the request path (issue 26:
// their timing told known addresses apart): the request queues one job either way, and the job looks
// the address up, makes the account or the link, and mails. An API with WORKER=off shows what the
// request path alone did; a worker on the same database then does the rest. The timing itself is
// compared in the benchmark (scripts/bench/account-timing.ts), never in the test suite.
import { createClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../server/src/auth/crypto/passwords.js';
import { createUser } from '../../server/src/features/auth/store.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { uniqueEmail } from '../support/auth.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let api: TestApp;
let smtp: TestSmtp;

beforeAll(async () => {
  smtp = await startTestSmtp();
  api = await startTestApp({ env: { WORKER: 'off', SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
});
afterAll(async () => {
  await api.close();
  await smtp.close();
});

const state = async () => {
  const [row] = await api.sql<{ users: number; orgs: number; tokens: number; mail: number; pending: number }[]>`
    select (select count(*)::int from users) as users,
           (select count(*)::int from organizations) as orgs,
           (select count(*)::int from email_tokens) as tokens,
           (select count(*)::int from mail_outbox) as mail,
           (select count(*)::int from pending_signups) as pending`;
  return row!;
};
const jobs = async () =>
  (
    await api.sql<{ task_identifier: string }[]>`
      select task_identifier from graphile_worker.jobs
      where task_identifier in ('complete_signup', 'send_password_reset') order by task_identifier`
  ).map((j) => j.task_identifier);

describe('the account-dependent half of sign-up and forgot-password', () => {
  it('is queued alike for known and unknown addresses, and done by the worker', async () => {
    const known = uniqueEmail('known');
    const fresh = uniqueEmail('fresh');
    const nobody = uniqueEmail('nobody');
    await createUser(
      api.sql,
      { email: known, passwordHash: await hashPassword('the owner passphrase'), name: 'Owner', language: 'en', verified: true },
      api.clock.now(),
    );
    const before = await state();
    const anon = createClient({ baseUrl: api.baseUrl, retries: 0 });
    for (const email of [known, nobody]) expect(await anon.authPasswordForgot({ body: { email } })).toEqual({ accepted: true });
    for (const email of [known, fresh]) {
      expect(await anon.authPasswordSignup({ body: { email, password: 'a fine passphrase', name: 'Fresh Person' } })).toEqual({
        accepted: true,
      });
    }
    // The request path made no account, no link and no mail, for any of them: it only queued.
    expect(await state()).toEqual({ ...before, pending: before.pending + 2 });
    expect(await jobs()).toEqual(['complete_signup', 'complete_signup', 'send_password_reset', 'send_password_reset']);

    const worker = await startTestApp({ env: { SMTP_URL: smtp.url }, databaseUrl: api.databaseUrl });
    try {
      const reset = await smtp.waitFor((m) => m.to.includes(known) && /reset-password\?token=/.test(m.text), 15_000);
      const notice = await smtp.waitFor((m) => m.to.includes(known) && /forgot-password/.test(m.text), 15_000);
      const verify = await smtp.waitFor((m) => m.to.includes(fresh) && /verify-email\?token=/.test(m.text), 15_000);
      expect(new Set([reset, notice, verify]).size).toBe(3);
      await worker.worker!.runDue();
      expect(await jobs()).toEqual([]);
      const after = await state();
      expect(after.pending).toBe(0);
      expect(after.users).toBe(before.users + 1);
      const [owner] = await api.sql<{ name: string }[]>`select name from users where email = ${known}`;
      expect(owner!.name).toBe('Owner');
      const [created] = await api.sql<{ name: string }[]>`select name from users where email = ${fresh}`;
      expect(created!.name).toBe('Fresh Person');
      expect(smtp.messages.filter((m) => m.to.includes(nobody))).toHaveLength(0);
    } finally {
      await worker.close();
    }
  }, 90_000);
});
