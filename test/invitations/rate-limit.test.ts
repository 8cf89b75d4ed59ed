// At most 50 invitations per organization per hour: each one mails an address the organization chose,
// so an organization cannot be used to mail strangers in bulk. Refused invitations spend nothing.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { signInAgain, snapshot } from './support.js';

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

it('allows 50 invitations an hour per organization, refuses the 51st with 429 and creates nothing', async () => {
  const owner = await signedIn(app, smtp, 'bulk');
  const { id } = await owner.api.organizationCreate({ body: { name: 'Bulk', slug: `bulk-${Date.now().toString(36)}` } });
  const { id: other } = await owner.api.organizationCreate({ body: { name: 'Other', slug: `other-${Date.now().toString(36)}` } });
  const invite = (organizationId: string, n: number) =>
    owner.api.invitationCreate({ path: { id: organizationId }, body: { email: `person-${n}@example.test`, role: 'member' } });
  await invite(id, 1);
  // Refusals for other reasons spend nothing: 49 more still fit after them.
  for (let i = 0; i < 5; i += 1) expect(await outcome(invite(id, 1))).toEqual([409, 'invitation-pending']);
  for (let n = 2; n < 51; n += 1) await invite(id, n);
  const before = await snapshot(app, id);
  const refused = await outcome(invite(id, 51));
  expect(refused).toEqual([429, 'rate-limited']);
  expect(await snapshot(app, id)).toEqual(before);
  // Another organization has its own allowance; an hour later this one has its own again.
  expect(await outcome(invite(other, 1))).toBe('ok');
  app.clock.advance(2 * 60 * 60 * 1000);
  const later = await signInAgain(app, smtp, owner.email); // the first session's access token has expired
  expect(await outcome(later.invitationCreate({ path: { id }, body: { email: 'person-52@example.test', role: 'member' } }))).toBe('ok');
});
