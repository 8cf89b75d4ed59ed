// What the invitation tests share: the mail an invitation sends, the id its link names, and a
// read-back of everything an invitation request could change in an organization.
import { createClient, type SvcClient } from '@svcplatform/sdk';
import type { TestApp } from '../support/app.js';
import { codeIn } from '../support/auth.js';
import type { ReceivedMail, TestSmtp } from '../support/smtp.js';

/** The invitation mail whose link names this invitation. */
export const invitationMail = (smtp: TestSmtp, invitationId: string): Promise<ReceivedMail> =>
  smtp.waitFor((m) => m.text.includes(`/invitations/${invitationId}`));

/** The invitation id the mail's link names. */
export function linkedId(mail: ReceivedMail): string {
  const m = /\/invitations\/([0-9a-f-]{36})\b/.exec(mail.text);
  if (!m) throw new Error(`no invitation link in mail "${mail.subject}"`);
  return m[1]!;
}

export interface Snapshot {
  invitations: Record<string, unknown>[];
  members: { user_id: string; role: string }[];
  audit: number;
}

/** The organization's invitations (every column), memberships and number of audit entries. */
export async function snapshot(app: TestApp, organizationId: string): Promise<Snapshot> {
  const invitations = await app.sql<Record<string, unknown>[]>`
    select * from invitations where organization_id = ${organizationId} order by created_at, id`;
  const members = await app.sql<{ user_id: string; role: string }[]>`
    select user_id, role from organization_members where organization_id = ${organizationId} order by created_at, user_id`;
  const [audit] = await app.sql<{ n: number }[]>`
    select count(*)::int as n from audit_entries where organization_id = ${organizationId}`;
  return { invitations, members, audit: audit!.n };
}

/**
 * A new session of an account made by `newAccount` (its default password), valid at the clock's time
 * now. Its own code mail is told apart by subject: an invitation's link may hold six digits in a row.
 */
export async function signInAgain(app: TestApp, smtp: TestSmtp, email: string): Promise<SvcClient> {
  const client = createClient({ baseUrl: app.baseUrl, retries: 0 });
  const seen = smtp.messages.length;
  const challenge = await client.authLogin({ body: { email, password: 'correct horse battery staple' } });
  const mail = await smtp.waitFor(
    (m) => m.to.includes(email) && smtp.messages.indexOf(m) >= seen && m.subject === 'Your sign-in code',
  );
  const session = await client.authLoginVerify({
    body: { challenge_id: challenge.challenge_id, code: codeIn(mail) },
  });
  return createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0 });
}
