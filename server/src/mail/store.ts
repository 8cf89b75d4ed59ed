// All SQL of the mail outbox (server/migrations/0003_mail_outbox.sql).
import type { Db, Sql } from '../db/client.js';

/** The LISTEN/NOTIFY channel that wakes senders when a mail is committed. */
export const OUTBOX_CHANNEL = 'outbox';

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

/** A row a sender holds a lease on; bodies are present because only unsent rows are claimed. */
export interface ClaimedMailRow {
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
  locked_until: Date | null;
}

/**
 * Inserts a mail due at once and notifies the senders. NOTIFY inside a transaction is delivered only
 * when it commits (and identical notifications of one transaction are folded into one), so a rolled
 * back state change neither leaves a row nor wakes anyone.
 */
export async function insertMail(db: Db, row: NewMailRow): Promise<void> {
  await db`
    insert into mail_outbox (id, recipient, subject, kind, text_body, html_body, code, created_at, next_attempt_at)
    values (${row.id}, ${row.recipient}, ${row.subject}, ${row.kind}, ${row.text_body}, ${row.html_body},
            ${row.code}, ${row.created_at}, ${row.created_at})`;
  await db`select pg_notify(${OUTBOX_CHANNEL}, '')`;
}

/**
 * Leases up to `limit` due rows to the caller until `leaseUntil` and counts the attempt. `skip locked`
 * lets concurrent senders pass over each other's rows instead of queueing behind them; the lease
 * (checked again by PostgreSQL on a row another sender updated meanwhile) keeps a row from being
 * claimed twice while it is being delivered, after this statement's row locks are gone. Counting the
 * attempt at claim time means a mail that crashes its sender still runs out of attempts.
 */
export async function claimDueMails(
  db: Db,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<ClaimedMailRow[]> {
  return db<ClaimedMailRow[]>`
    update mail_outbox set locked_until = ${leaseUntil}, attempts = attempts + 1
    where id in (
      select id from mail_outbox
      where sent_at is null and given_up_at is null
        and next_attempt_at <= ${now}
        and (locked_until is null or locked_until <= ${now})
      order by next_attempt_at
      limit ${limit}
      for update skip locked
    )
    returning id, recipient, subject, kind, text_body, html_body, code, created_at, attempts`;
}

/** Records delivery and erases what only the recipient may read; the envelope stays for audit. */
export async function markMailSent(db: Db, id: string, now: Date): Promise<void> {
  await db`
    update mail_outbox
    set sent_at = ${now}, locked_until = null, text_body = null, html_body = null, code = null
    where id = ${id} and sent_at is null and given_up_at is null`;
}

/** Puts a failed mail back in line for `nextAttemptAt`, unless another sender delivered it meanwhile. */
export async function scheduleMailRetry(
  db: Db,
  id: string,
  nextAttemptAt: Date,
  error: string,
): Promise<void> {
  await db`
    update mail_outbox set next_attempt_at = ${nextAttemptAt}, locked_until = null, last_error = ${error}
    where id = ${id} and sent_at is null and given_up_at is null`;
}

/** Abandons a mail for good; its bodies are erased as after sending, since nobody will read them. */
export async function giveUpMail(db: Db, id: string, now: Date, error: string): Promise<void> {
  await db`
    update mail_outbox
    set given_up_at = ${now}, locked_until = null, last_error = ${error},
        text_body = null, html_body = null, code = null
    where id = ${id} and sent_at is null and given_up_at is null`;
}

export async function findMail(db: Db, id: string): Promise<MailEnvelopeRow | undefined> {
  const [row]: [MailEnvelopeRow?] = await db`
    select id, recipient, subject, kind, text_body, html_body, code, created_at, next_attempt_at, attempts,
           sent_at, given_up_at, last_error, locked_until
    from mail_outbox where id = ${id}`;
  return row;
}

/**
 * Calls `onWake` for every committed mail and again each time the listening connection is (re)made,
 * since notifications sent while it was down are lost. Resolves once LISTEN is in effect.
 */
export async function listenForMail(sql: Sql, onWake: () => void): Promise<{ unlisten(): Promise<void> }> {
  const { unlisten } = await sql.listen(OUTBOX_CHANNEL, () => onWake(), onWake);
  return { unlisten: async () => void (await unlisten()) };
}
