// Delivering queued mail: the send_mail job (mail/tasks.ts), one per mail, added by enqueueMail in the
// transaction that queued the mail. The job's lock in the queue keeps two workers from delivering a
// mail at once; a worker that dies mid-delivery loses that lock with its database connection
// (jobs/liveness.ts) and the job runs again elsewhere.
//
// Delivery is at least once: a worker that dies after the SMTP server accepted a mail but before it
// recorded that sends it again when the job runs again. For sign-in mail a rare duplicate is better
// than a lost code.
//
// When an attempt happens is the queue's business: the job runs at once, and after a failure a new job
// runs retryDelayMs later (on the database's clock). The row records what happened on the app's
// clock (next_attempt_at, sent_at, given_up_at); a test with a frozen clock runs a retry by
// bringing its job forward (Worker.runDue).
import type { TaskContext } from '../jobs/context.js';
import type { SendMailPayload } from '../jobs/payloads.js';
import { enqueue } from '../jobs/queue.js';
import { mailJob } from './outbox.js';
import { classifyFailure, MAX_ATTEMPTS, retryDelayMs } from './retry.js';
import {
  findStrandedMail,
  giveUpMail,
  markMailSent,
  scheduleMailRetry,
  takeMailAttempt,
  type TakenMailRow,
} from './store.js';
import { isUuid } from '../http/uuid.js';



/** The send_mail task: one delivery attempt of one mail, if it is still waiting. */
export async function sendMailTask(payload: unknown, ctx: TaskContext): Promise<void> {
  const id = (payload as Partial<SendMailPayload> | null)?.id;
  if (typeof id !== 'string' || !isUuid(id)) throw new Error('send_mail: the payload names no mail id');
  const row = await takeMailAttempt(ctx.sql, id);
  if (!row) return; // sent, given up or deleted meanwhile
  if (row.attempts > MAX_ATTEMPTS) {
    // Every failed attempt is recorded and the last one gives up, so attempts beyond the last are
    // runs that never finished: this mail stops its workers (it crashes them, or they are killed
    // while sending it). Stop trying, as after any other last failure.
    await giveUpMail(
      ctx.sql,
      row.id,
      ctx.clock.now(),
      'no delivery attempt finished: the worker stopped during each',
    );
    ctx.log.error({ mail_id: row.id, kind: row.kind, attempts: row.attempts }, 'mail given up');
    return;
  }
  let file: string | null;
  try {
    file = await ctx.mail.transport.send({
      id: row.id,
      from: ctx.mail.from,
      to: row.recipient,
      subject: row.subject,
      text: row.text_body,
      html: row.html_body,
      createdAt: row.created_at,
    });
  } catch (err) {
    await recordFailure(ctx, row, err);
    return;
  }
  await markMailSent(ctx.sql, row.id, ctx.clock.now());
  if (ctx.mail.logCodes) {
    ctx.log.info(
      {
        mail_id: row.id,
        kind: row.kind,
        to: row.recipient,
        file,
        ...(row.code !== null ? { code: row.code } : {}),
      },
      'mail written to outbox',
    );
  } else {
    ctx.log.info({ mail_id: row.id, kind: row.kind, attempts: row.attempts }, 'mail sent');
  }
}

async function recordFailure(ctx: TaskContext, row: TakenMailRow, err: unknown): Promise<void> {
  const outcome = classifyFailure(err, row.attempts, ctx.mail.transport.secrets);
  const now = ctx.clock.now();
  const fields = { mail_id: row.id, kind: row.kind, attempts: row.attempts, error: outcome.error };
  if (outcome.giveUp) {
    await giveUpMail(ctx.sql, row.id, now, outcome.error);
    ctx.log.error(fields, 'mail given up');
    return;
  }
  const delay = retryDelayMs(row.attempts);
  const nextAttemptAt = new Date(now.getTime() + delay);
  // The row and the job that retries it change together: a retry is never recorded without its job.
  await ctx.sql.begin(async (tx) => {
    await scheduleMailRetry(tx, row.id, nextAttemptAt, outcome.error);
    await enqueue(tx, 'send_mail', { id: row.id }, mailJob(row.id, delay));
  });
  ctx.log.warn(
    { ...fields, next_attempt_at: nextAttemptAt.toISOString() },
    'mail delivery failed; will retry',
  );
}

/** How long a mail may be overdue before the sweep looks for its job. */
const STRANDED_AFTER_MS = 10 * 60_000;
const STRANDED_BATCH = 100;

/**
 * The periodic requeue_stranded_mail task: a waiting mail whose job can no longer run (the queue gave
 * it up after it crashed its workers or met database errors often enough, or the mail was queued by
 * hand) gets a new one. A job never goes missing otherwise, so this finds nothing in a healthy system.
 */
export async function requeueStrandedMail(ctx: TaskContext): Promise<void> {
  const ids = await findStrandedMail(
    ctx.sql,
    new Date(ctx.clock.now().getTime() - STRANDED_AFTER_MS),
    STRANDED_BATCH,
  );
  for (const id of ids) await enqueue(ctx.sql, 'send_mail', { id }, mailJob(id));
  if (ids.length > 0) ctx.log.warn({ mails: ids.length }, 'mail without a runnable job was queued again');
}
