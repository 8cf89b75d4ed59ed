// Queuing a mail: render now, store in the caller's transaction, deliver later (sender.ts). Called
// with the transaction of the state change the mail announces (a login challenge, a reset token), so
// the mail exists if and only if that change committed, and a code is never mailed for a challenge
// that was rolled back.
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/client.js';
import { insertMail } from './store.js';
import { renderMail, type MailData, type MailKind } from './templates.js';

/** One mail to queue; `kind` decides the shape of `data`. */
export type OutgoingMail = {
  [K in MailKind]: {
    /** One bare address (`user@example.com`), as the account stores it. */
    to: string;
    kind: K;
    /** The recipient's language tag (`de-AT`); unknown or empty falls back to English. */
    language: string | null;
    data: MailData[K];
  };
}[MailKind];

// One addr-spec and nothing else: a display name, a comma or a line break in `to` would let a stored
// address reach more or other people than the account's owner.
const BARE_ADDRESS = /^[^\s@,;:<>()[\]"\\]+@[^\s@,;:<>()[\]"\\]+$/;

export async function enqueueMail(db: Db, msg: OutgoingMail, now: Date): Promise<void> {
  if (!BARE_ADDRESS.test(msg.to)) throw new Error('enqueueMail: recipient must be one bare email address');
  const rendered = renderMail(msg.kind, msg.language, msg.data);
  await insertMail(db, {
    id: randomUUID(),
    recipient: msg.to,
    subject: rendered.subject,
    kind: msg.kind,
    text_body: rendered.text,
    html_body: rendered.html,
    code: msg.kind === 'login_code' ? msg.data.code : null,
    created_at: now,
  });
}
