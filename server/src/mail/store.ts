// All SQL of the mail outbox (server/migrations/0003_mail_outbox.sql, 0008_job_queue.sql).
import type { Db } from '../db/client.js';

/** Each mail's send_mail job carries the key `mail:<id>` (migration 0008 makes the same keys). */
export const MAIL_JOB_KEY_PREFIX = 'mail:';

export interface NewMailRow {
  id: string;
  recipient: string;
  subject: string;
  kind: string;
  text_body: string;
  html_body: string;
  code: string | null;
  created_at: Date;
}

/** A mail taken for one delivery attempt; bodies are present because only unsent rows are taken. */
export interface TakenMailRow {
  id: string;
  recipient: string;
  subject: string;
  kind: string;
  text_body: string;
  html_body: string;
  code: string | null;
  created_at: Date;
  /** Counting this one. */
  attempts: number;
}

export interface MailEnvelopeRow {
  id: string;
  recipient: string;
  subject: string;
  kind: string;
  text_body: string | null;
  html_body: string | null;
  code: string | null;
  created_at: Date;
  next_attempt_at: Date;
  attempts: number;
  sent_at: Date | null;
  given_up_at: Date | null;
  last_error: string | null;
}

/** Inserts a mail due at once; its send_mail job is added in the same transaction (outbox.ts). */
export async function insertMail(db: Db, row: NewMailRow): Promise<void> {
  await db`
    insert into mail_outbox (id, recipient, subject, kind, text_body, html_body, code, created_at, next_attempt_at)
    values (${row.id}, ${row.recipient}, ${row.subject}, ${row.kind}, ${row.text_body}, ${row.html_body},
            ${row.code}, ${row.created_at}, ${row.created_at})`;
}

/**
 * Counts one delivery attempt of a mail that is still waiting, and returns it; undefined when it was
 * sent, given up or deleted. Counting at the start means a mail that crashes its worker still runs out
 * of attempts.
 */
export async function takeMailAttempt(db: Db, id: string): Promise<TakenMailRow | undefined> {
  const [row]: [TakenMailRow?] = await db`
    update mail_outbox set attempts = attempts + 1
    where id = ${id} and sent_at is null and given_up_at is null
    returning id, recipient, subject, kind, text_body, html_body, code, created_at, attempts`;
  return row;
}

/** Records delivery and erases what only the recipient may read; the envelope stays for audit. */
export async function markMailSent(db: Db, id: string, now: Date): Promise<void> {
  await db`
    update mail_outbox
    set sent_at = ${now}, text_body = null, html_body = null, code = null
    where id = ${id} and sent_at is null and given_up_at is null`;
}

/** Puts a failed mail back in line for `nextAttemptAt`, unless it was delivered meanwhile. */
export async function scheduleMailRetry(
  db: Db,
  id: string,
  nextAttemptAt: Date,
  error: string,
): Promise<void> {
  await db`
    update mail_outbox set next_attempt_at = ${nextAttemptAt}, last_error = ${error}
    where id = ${id} and sent_at is null and given_up_at is null`;
}

/** Abandons a mail for good; its bodies are erased as after sending, since nobody will read them. */
export async function giveUpMail(db: Db, id: string, now: Date, error: string): Promise<void> {
  await db`
    update mail_outbox
    set given_up_at = ${now}, last_error = ${error}, text_body = null, html_body = null, code = null
    where id = ${id} and sent_at is null and given_up_at is null`;
}

export async function findMail(db: Db, id: string): Promise<MailEnvelopeRow | undefined> {
  const [row]: [MailEnvelopeRow?] = await db`
    select id, recipient, subject, kind, text_body, html_body, code, created_at, next_attempt_at, attempts,
           sent_at, given_up_at, last_error
    from mail_outbox where id = ${id}`;
  return row;
}

/**
 * Mail still waiting, due before `staleBefore`, that has no job which can still run: its job was given up by the queue (repeated crashes or database errors) or never
 * existed. At most `limit`, oldest first.
 */
export async function findStrandedMail(db: Db, staleBefore: Date, limit: number): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    select m.id from mail_outbox m
    where m.sent_at is null and m.given_up_at is null and m.next_attempt_at < ${staleBefore}
      and not exists (
        select 1 from graphile_worker.jobs j
        where j.key = ${MAIL_JOB_KEY_PREFIX} || m.id::text and (j.locked_at is not null or j.attempts < j.max_attempts)
      )
    order by m.next_attempt_at
    limit ${limit}`;
  return rows.map((r) => r.id);
}

/** Deletes finished mail (sent or given up) older than `before`; at most `limit` rows. */
export async function deleteFinishedMail(db: Db, before: Date, limit: number): Promise<number> {
  const rows = await db`
    delete from mail_outbox where id in (
      select id from mail_outbox
      where (sent_at is not null or given_up_at is not null) and coalesce(sent_at, given_up_at) < ${before}
      limit ${limit}
    )
    returning id`;
  return rows.length;
}
