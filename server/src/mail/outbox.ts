// Queuing a mail: render now, store in the caller's transaction, deliver later (sender.ts). Called
// with the transaction of the state change the mail announces (a login challenge, a reset token), so
// the mail and its send_mail job exist if and only if that change committed, and a code is never
// mailed for a challenge that was rolled back. The job carries only the mail's id: codes and links
// stay in mail_outbox, whose bodies are erased once the mail is sent or given up, and never reach
// the queue's tables, which keep a job's payload as long as the job.
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/client.js';
import { enqueue, type EnqueueOptions } from '../jobs/queue.js';
import { insertMail, MAIL_JOB_KEY_PREFIX } from './store.js';
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

/**
 * Queue-level retries of one send_mail job: only a job that throws (the database failed it) is run again
 * by the queue; a failed delivery is recorded and scheduled by the job itself (sender.ts, retry.ts).
 */
const MAIL_JOB_MAX_ATTEMPTS = 10;

/** The send_mail job of mail `id`: one per mail (its key), run `delayMs` from now. */
export function mailJob(id: string, delayMs?: number): EnqueueOptions {
  return { jobKey: `${MAIL_JOB_KEY_PREFIX}${id}`, maxAttempts: MAIL_JOB_MAX_ATTEMPTS, delayMs };
}

/** `now` is the caller's clock: the mail's created_at and first due time. */
export async function enqueueMail(db: Db, msg: OutgoingMail, now: Date): Promise<void> {
  if (!BARE_ADDRESS.test(msg.to)) throw new Error('enqueueMail: recipient must be one bare email address');
  const rendered = renderMail(msg.kind, msg.language, msg.data);
  const id = randomUUID();
  await insertMail(db, {
    id,
    recipient: msg.to,
    subject: rendered.subject,
    kind: msg.kind,
    text_body: rendered.text,
    html_body: rendered.html,
    code: msg.kind === 'login_code' ? msg.data.code : null,
    created_at: now,
  });
  await enqueue(db, 'send_mail', { id }, mailJob(id));
}
