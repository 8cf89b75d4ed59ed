// Two API processes on one database behave as one: keys and limits live in PostgreSQL.
import { createClient, SvcApiError } from '@svcplatform/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount, uniqueEmail } from '../support/auth.js';
import { startSecondProcess, type SecondProcess } from '../support/second-process.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let other: SecondProcess;
let otherUrl: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  // The test clock is frozen; the second process runs on real time, so set ours to now.
  app = await startTestApp({ env: { SMTP_URL: smtp.url } });
  app.clock.followRealTime();
  other = await startSecondProcess(app, { SMTP_URL: smtp.url });
  otherUrl = other.baseUrl;
}, 60_000);
afterAll(async () => {
  await other.stop();
  await app.close();
  await smtp.close();
});

it('verifies on one process the tokens the other issued, and rotates across them', async () => {
  const { session } = await newAccount(app, smtp, 'two');
  const onOther = createClient({ baseUrl: otherUrl, token: session.token, retries: 0 });
  expect((await onOther.authSessionGet()).session_id).toBe(session.session_id);
  const rotated = await createClient({ baseUrl: otherUrl, retries: 0 }).authRefresh({ body: { refresh_token: session.refresh_token } });
  const back = createClient({ baseUrl: app.baseUrl, token: rotated.token, retries: 0 });
  expect((await back.authSessionGet()).session_id).toBe(session.session_id);
  const [h1, h2] = [session.token, rotated.token].map((t) => JSON.parse(Buffer.from(t.split('.')[0]!, 'base64url').toString()).kid);
  expect(h1).toBe(h2);
  // Logging out on one ends the session on the other at once.
  await back.authLogout({ body: { refresh_token: rotated.refresh_token } });
  await expect(onOther.authSessionGet()).rejects.toMatchObject({ status: 401 });
});

it('shares the login limit: attempts on both processes count against one budget', async () => {
  const email = uniqueEmail('shared');
  const clients = [createClient({ baseUrl: app.baseUrl, retries: 0 }), createClient({ baseUrl: otherUrl, retries: 0 })];
  const statuses: number[] = [];
  for (let i = 0; i < 11; i += 1) {
    const err = await clients[i % 2]!.authLogin({ body: { email, password: 'wrong password!' } }).catch((e: unknown) => e);
    statuses.push(err instanceof SvcApiError ? err.status : 200);
  }
  expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
  expect(statuses[10]).toBe(429);
});
