// Signing a person up and in through the real routes and the real mail, for tests that need a session.
import { createClient, type components } from '@svcplatform/sdk';
import type { TestApp } from './app.js';
import type { ReceivedMail, TestSmtp } from './smtp.js';

export type Session = components['schemas']['Session'];

export const tokenIn = (mail: ReceivedMail): string => {
  const m = /token=([A-Za-z0-9_-]+)/.exec(mail.text);
  if (!m) throw new Error(`no token link in mail "${mail.subject}"`);
  return m[1]!;
};

export const codeIn = (mail: ReceivedMail): string => {
  const m = /\b(\d{6})\b/.exec(mail.text);
  if (!m) throw new Error(`no code in mail "${mail.subject}"`);
  return m[1]!;
};

/** How long the helpers wait for a mail: the queue runs within milliseconds, but a loaded machine is slow. */
const MAIL_WAIT_MS = 20_000;

let counter = 0;
export const uniqueEmail = (tag = 'user') => `${tag}-${Date.now().toString(36)}-${(counter += 1)}@example.test`;

export async function signUp(app: TestApp, smtp: TestSmtp, email: string, password: string): Promise<void> {
  const client = createClient({ baseUrl: app.baseUrl, retries: 0 });
  const seen = smtp.messages.length;
  await client.authPasswordSignup({ body: { email, password, name: 'Test Person' } });
  // The account and its verification mail are made by jobs after the answer: two hops of the queue.
  const mail = await smtp.waitFor((m) => m.to.includes(email) && smtp.messages.indexOf(m) >= seen, MAIL_WAIT_MS);
  await client.authPasswordVerify({ body: { token: tokenIn(mail) } });
}

export async function logIn(app: TestApp, smtp: TestSmtp, email: string, password: string): Promise<Session> {
  const client = createClient({ baseUrl: app.baseUrl, retries: 0 });
  const seen = smtp.messages.length;
  const challenge = await client.authLogin({ body: { email, password } });
  const mail = await smtp.waitFor(
    (m) => m.to.includes(email) && smtp.messages.indexOf(m) >= seen && /\d{6}/.test(m.text),
    MAIL_WAIT_MS,
  );
  return client.authLoginVerify({ body: { challenge_id: challenge.challenge_id, code: codeIn(mail) } });
}

export async function newAccount(app: TestApp, smtp: TestSmtp, tag = 'user', password = 'correct horse battery staple') {
  const email = uniqueEmail(tag);
  await signUp(app, smtp, email, password);
  const session = await logIn(app, smtp, email, password);
  return { email, password, session };
}
