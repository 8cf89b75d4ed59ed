// The periodic pruning jobs (server/src/jobs/prune.ts) delete only what expired by their rules, on
// the app's frozen clock, and the stranded-mail sweep gives a waiting mail without a job a new one.
// Each job runs through the app's real worker (worker.run).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_PER_ADDRESS } from '../../server/src/features/auth/limits.js';
import { PRUNE_BATCH, RETENTION } from '../../server/src/prune/prune.js';
import { enqueue } from '../../server/src/jobs/queue.js';
import { mailJob } from '../../server/src/mail/outbox.js';
import { insertMail } from '../../server/src/mail/store.js';
import { hit } from '../../server/src/ratelimit/limiter.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

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

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ago = (ms: number) => new Date(app.clock.now().getTime() - ms);
const run = (task: string) => app.worker!.run(task);

describe('prune_rate_limit_buckets', () => {
  it('deletes buckets whose window and the next are over, and keeps the rest', async () => {
    await app.sql`delete from rate_limit_buckets`;
    // Through the limiter, so expires_at is what a real hit writes: 15-minute windows here.
    // The clock stands at 12:00:00: the current window began now, the previous one at 11:45.
    await hit(app.sql, LOGIN_PER_ADDRESS, 'two-windows-back', ago(16 * 60_000));
    await hit(app.sql, LOGIN_PER_ADDRESS, 'previous-window', ago(14 * 60_000));
    await hit(app.sql, LOGIN_PER_ADDRESS, 'current', app.clock.now());
    // A backlog bigger than one statement deletes.
    await app.sql`
      insert into rate_limit_buckets (key, window_start, count, prev_count, expires_at)
      select 'bulk:' || i, ${ago(DAY)}, 1, 0, ${ago(DAY - HOUR)} from generate_series(1, ${PRUNE_BATCH * 2 + 1}) i`;

    await run('prune_rate_limit_buckets');

    const keys = await app.sql<{ key: string }[]>`select key from rate_limit_buckets order by key`;
    // 'previous-window' still counts towards the sliding estimate of the current window.
    expect(keys.map((k) => k.key)).toEqual(['login:address:current', 'login:address:previous-window']);
  });

  it('writes expires_at two windows after the window starts', async () => {
    await app.sql`delete from rate_limit_buckets`;
    await hit(app.sql, LOGIN_PER_ADDRESS, 'x', app.clock.now());
    const [row] = await app.sql<
      { window_start: Date; expires_at: Date }[]
    >`select window_start, expires_at from rate_limit_buckets`;
    expect(row!.expires_at.getTime() - row!.window_start.getTime()).toBe(
      2 * LOGIN_PER_ADDRESS.windowSeconds * 1000,
    );
  });
});

describe('prune_login_challenges', () => {
  it(`deletes challenges a day past their expiry, consumed or not, and keeps the rest`, async () => {
    const userId = randomUUID();
    await app.sql`
      insert into users (id, email, name, created_at, updated_at)
      values (${userId}, ${`prune-${userId}@example.test`}, 'Prune', ${ago(30 * DAY)}, ${ago(30 * DAY)})`;
    const challenge = (tag: string, expiresAt: Date, consumedAt: Date | null = null) => app.sql`
      insert into login_challenges (id, user_id, code_digest, created_at, expires_at, consumed_at, user_agent)
      values (${randomUUID()}, ${userId}, ${Buffer.from(tag)}, ${new Date(expiresAt.getTime() - 10 * 60_000)}, ${expiresAt}, ${consumedAt}, ${tag})`;
    await challenge('expired-long-ago', ago(RETENTION.loginChallengeMs + HOUR));
    await challenge(
      'consumed-long-ago',
      ago(RETENTION.loginChallengeMs + HOUR),
      ago(RETENTION.loginChallengeMs + 2 * HOUR),
    );
    await challenge('expired-recently', ago(HOUR));
    await challenge('live', new Date(app.clock.now().getTime() + 5 * 60_000));

    await run('prune_login_challenges');

    const left = await app.sql<{ user_agent: string }[]>`
      select user_agent from login_challenges where user_id = ${userId} order by user_agent`;
    expect(left.map((r) => r.user_agent)).toEqual(['expired-recently', 'live']);
  });
});

describe('prune_oauth_flows', () => {
  it('deletes flows and completion keys a day past their expiry, spent or not, and keeps the rest', async () => {
    const userId = randomUUID();
    await app.sql`
      insert into users (id, email, name, created_at, updated_at)
      values (${userId}, ${`oauth-${userId}@example.test`}, 'OAuth', ${ago(30 * DAY)}, ${ago(30 * DAY)})`;
    const flow = (tag: string, expiresAt: Date) => app.sql`
      insert into oauth_flows (id, state_digest, provider_id, purpose, redirect_to, secrets_sealed, created_at, expires_at)
      values (${randomUUID()}, ${Buffer.from(`${userId}:${tag}`)}, 'test', 'sign_in', ${tag}, 'sealed',
              ${new Date(expiresAt.getTime() - 10 * 60_000)}, ${expiresAt})`;
    const key = (tag: string, expiresAt: Date, usedAt: Date | null = null) => app.sql`
      insert into oauth_completions (id, key_digest, user_id, provider_id, created_at, expires_at, used_at)
      values (${randomUUID()}, ${Buffer.from(`${userId}:${tag}`)}, ${userId}, ${tag},
              ${new Date(expiresAt.getTime() - 2 * 60_000)}, ${expiresAt}, ${usedAt})`;
    await flow('old', ago(RETENTION.oauthMs + HOUR));
    await flow('recent', ago(HOUR));
    await key('old-spent', ago(RETENTION.oauthMs + HOUR), ago(RETENTION.oauthMs + 2 * HOUR));
    await key('recent', ago(HOUR));
    await key('live', new Date(app.clock.now().getTime() + 60_000));

    await run('prune_oauth_flows');

    const flows = await app.sql<{ redirect_to: string }[]>`
      select redirect_to from oauth_flows where redirect_to in ('old', 'recent') order by redirect_to`;
    expect(flows.map((r) => r.redirect_to)).toEqual(['recent']);
    const keys = await app.sql<{ provider_id: string }[]>`
      select provider_id from oauth_completions where user_id = ${userId} order by provider_id`;
    expect(keys.map((r) => r.provider_id)).toEqual(['live', 'recent']);
  });
});

describe('prune_finished_mail', () => {
  it('deletes sent and given-up mail past its retention, never mail still waiting', async () => {
    const mail = async (tag: string, createdAt: Date, finished: { sentAt?: Date; givenUpAt?: Date } = {}) => {
      const id = randomUUID();
      await insertMail(app.sql, {
        id,
        recipient: `${tag}@example.test`,
        subject: tag,
        kind: 'login_code',
        text_body: 'body',
        html_body: 'body',
        code: null,
        created_at: createdAt,
      });
      if (finished.sentAt || finished.givenUpAt) {
        await app.sql`
          update mail_outbox set sent_at = ${finished.sentAt ?? null}, given_up_at = ${finished.givenUpAt ?? null},
                 text_body = null, html_body = null
          where id = ${id}`;
      }
    };
    const old = RETENTION.finishedMailMs + DAY;
    await mail('sent-long-ago', ago(old), { sentAt: ago(old) });
    await mail('given-up-long-ago', ago(old), { givenUpAt: ago(old) });
    await mail('sent-recently', ago(RETENTION.finishedMailMs - DAY), {
      sentAt: ago(RETENTION.finishedMailMs - DAY),
    });
    // Waiting this long is wrong, but deleting it would lose it.
    await mail('waiting-long', ago(old));

    await run('prune_finished_mail');

    const left = await app.sql<
      { subject: string }[]
    >`select subject from mail_outbox where recipient like '%@example.test' and kind = 'login_code' and subject in ('sent-long-ago', 'given-up-long-ago', 'sent-recently', 'waiting-long') order by subject`;
    expect(left.map((r) => r.subject)).toEqual(['sent-recently', 'waiting-long']);
    await app.sql`delete from mail_outbox where subject = 'waiting-long'`;
  });
});

describe('prune_signing_keys', () => {
  it('deletes keys a day past expires_at and keeps every key a valid token may name', async () => {
    await app.sql`delete from signing_keys`;
    const key = (tag: string, retireAfter: Date, expiresAt: Date) => app.sql`
      insert into signing_keys (kid, alg, public_jwk, private_jwk_sealed, created_at, retire_after, expires_at)
      values (${tag}, 'EdDSA', ${app.sql.json({ tag })}, 'sealed', ${new Date(retireAfter.getTime() - 30 * DAY)},
              ${retireAfter}, ${expiresAt})`;
    await key('expired-long-ago', ago(RETENTION.signingKeyMs + 2 * HOUR), ago(RETENTION.signingKeyMs + HOUR));
    await key('expired-recently', ago(2 * HOUR), ago(HOUR));
    // Retired: signs nothing new, but tokens it signed in its last hour still verify.
    await key('retired-verifying', ago(10 * 60_000), new Date(app.clock.now().getTime() + 50 * 60_000));
    await key(
      'current',
      new Date(app.clock.now().getTime() + DAY),
      new Date(app.clock.now().getTime() + DAY + HOUR),
    );

    await run('prune_signing_keys');

    const left = await app.sql<{ kid: string }[]>`select kid from signing_keys order by kid`;
    expect(left.map((r) => r.kid)).toEqual(['current', 'expired-recently', 'retired-verifying']);
  });
});

describe('requeue_stranded_mail', () => {
  it('gives a long-waiting mail without a job a new one, which delivers it; a mail with a job keeps its one', async () => {
    const stranded = randomUUID();
    // As mail queued before the queue existed: a row and no job.
    await insertMail(app.sql, {
      id: stranded,
      recipient: 'stranded@example.test',
      subject: 'Your sign-in code',
      kind: 'login_code',
      text_body: 'Your sign-in code is: 111111',
      html_body: '<p>111111</p>',
      code: '111111',
      created_at: ago(HOUR),
    });
    await run('requeue_stranded_mail');
    await app.worker!.runDue();
    await smtp.waitFor((m) => m.to.includes('stranded@example.test'));
    const [row] = await app.sql<
      { sent_at: Date | null; attempts: number }[]
    >`select sent_at, attempts from mail_outbox where id = ${stranded}`;
    expect(row).toEqual({ sent_at: app.clock.now(), attempts: 1 });

    // A mail whose job waits (a retry's backoff) is not given a second one.
    const waiting = randomUUID();
    await insertMail(app.sql, {
      id: waiting,
      recipient: 'waiting@example.test',
      subject: 'Your sign-in code',
      kind: 'login_code',
      text_body: 'x',
      html_body: 'x',
      code: null,
      created_at: ago(HOUR),
    });
    await enqueue(app.sql, 'send_mail', { id: waiting }, { ...mailJob(waiting), delayMs: HOUR });
    await run('requeue_stranded_mail');
    const jobs = await app.sql`select id from graphile_worker.jobs where key = ${`mail:${waiting}`}`;
    expect(jobs).toHaveLength(1);
    await app.sql`delete from mail_outbox where id = ${waiting}`;
  });
});
