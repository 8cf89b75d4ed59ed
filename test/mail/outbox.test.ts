// The mail outbox end to end: enqueueMail in a real transaction, its send_mail job run by the job
// worker (server/src/jobs/) against a real SMTP server (smtp-server on loopback) and against the file
// transport, on a fresh PostgreSQL database.
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/src/config.js';
import { connect, type Sql } from '../../server/src/db/client.js';
import { createLogger } from '../../server/src/http/logging.js';
import { startWorker, type Worker, type WorkerOptions } from '../../server/src/jobs/worker.js';
import { TASKS } from '../../server/src/tasks.js';
import { enqueueMail, type OutgoingMail } from '../../server/src/mail/outbox.js';
import { MAX_ATTEMPTS, retryDelayMs } from '../../server/src/mail/retry.js';
import { findMail, type MailEnvelopeRow } from '../../server/src/mail/store.js';
import { createTestDatabase, TestClock, testBox } from '../support/app.js';
import { parseMail } from '../support/mime.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Sql;
let peer: TestSmtp;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  sql = connect(db.url, { max: 5 });
  peer = await startTestSmtp();
});

afterEach(async () => {
  // Workers first (they use the connections and the peer), then whatever else the test opened.
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  peer.refuse = null;
  // A test's mail still waiting (a retry scheduled for later) is not the next test's business: its
  // job finds it given up and does nothing.
  await sql`update mail_outbox set given_up_at = now(), text_body = null, html_body = null, code = null
            where sent_at is null and given_up_at is null`;
});

afterAll(async () => {
  await peer.close();
  await sql.end({ timeout: 1 });
  await db.drop();
});

let counter = 0;
const address = (tag: string) => `${tag}-${(counter += 1)}@example.test`;

function captureLog() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      cb();
    },
  });
  return { log: createLogger('debug', sink), lines };
}

/** The environment of a worker: SMTP to the test peer unless told otherwise. */
function env(overrides: Record<string, string | undefined> = {}): WorkerOptions['config'] {
  const vars: Record<string, string | undefined> = {
    NODE_ENV: 'test',
    DATABASE_URL: db.url,
    DATA_DIR: join(tmpdir(), 'svc-mail-unused'),
    SMTP_URL: peer.url,
    PUBLIC_BASE_URL: 'https://app.example.com',
    ...overrides,
  };
  return loadConfig(Object.fromEntries(Object.entries(vars).filter(([, v]) => v !== undefined)));
}

async function worker(
  options: Partial<Omit<WorkerOptions, 'config'>> & { config?: WorkerOptions['config'] } = {},
): Promise<Worker & { lines: Record<string, unknown>[] }> {
  const { log, lines } = captureLog();
  const w = await startWorker({
    sql,
    databaseUrl: db.url,
    config: env(),
    log,
    box: testBox,
    tasks: TASKS,
    periodic: false,
    // Long, so that only NOTIFY or runDue() makes a worker look for a job during a test.
    pollIntervalMs: 60_000,
    ...options,
  });
  cleanups.push(() => w.stop());
  return Object.assign(w, { lines });
}

const loginCode = (to: string, code = '493817', language = 'en'): OutgoingMail => ({
  to,
  kind: 'login_code',
  language,
  data: { code, expiresMinutes: 10 },
});

async function enqueue(msg: OutgoingMail, now = new Date()): Promise<void> {
  await sql.begin((tx) => enqueueMail(tx, msg, now));
}

async function rowsFor(recipient: string): Promise<MailEnvelopeRow[]> {
  const ids = await sql<
    { id: string }[]
  >`select id from mail_outbox where recipient = ${recipient} order by created_at`;
  return Promise.all(ids.map(async ({ id }) => (await findMail(sql, id))!));
}

/** The mail's waiting send_mail jobs, with how long until each may run (database clock). */
async function jobsOf(mailId: string): Promise<{ waitMs: number; attempts: number }[]> {
  return sql<{ waitMs: number; attempts: number }[]>`
    select (extract(epoch from run_at - now()) * 1000)::float8 as "waitMs", attempts
    from graphile_worker.jobs where key = ${`mail:${mailId}`} and attempts < max_attempts`;
}

/** The mail's rows once its first attempt failed (it runs as soon as the mail is committed). */
async function failedOnce(recipient: string): Promise<MailEnvelopeRow[]> {
  return eventually(async () => {
    const rows = await rowsFor(recipient);
    return rows[0]?.last_error ? rows : null;
  });
}

async function mailJobCount(): Promise<number> {
  const [row] = await sql<
    [{ n: number }]
  >`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'send_mail'`;
  return row.n;
}

async function eventually<T>(
  probe: () => Promise<T | undefined | null | false>,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('over SMTP', () => {
  it('delivers a committed mail woken by NOTIFY, not by its poll, then erases its bodies', async () => {
    // Polls once an hour and is listening once started: a mail that arrives at all came by NOTIFY (no
    // bound on how fast, which a loaded machine would break; the benchmarks measure speed).
    const w = await worker({ pollIntervalMs: 3_600_000 });
    const to = address('notify');
    await enqueue(loginCode(to, '582014'));
    const mail = await peer.waitFor((m) => m.to.includes(to), 30_000);

    expect(mail.to).toEqual([to]);
    expect(mail.from).toBe('no-reply@app.example.com');
    expect(mail.headers.from).toBe('Hosting Platform <no-reply@app.example.com>');
    expect(mail.headers.to).toBe(to);
    expect(mail.headers['auto-submitted']).toBe('auto-generated');
    expect(mail.subject).toBe('Your sign-in code');
    expect(mail.text).toContain('Your sign-in code is:\n\n582014\n');
    expect(mail.html).toMatch(/<strong[^>]*>582014<\/strong>/);

    const [row] = await eventually(async () => {
      const rows = await rowsFor(to);
      return rows[0]?.sent_at ? rows : null;
    });
    expect(row).toMatchObject({
      id: mail.headers['x-outbox-id'],
      recipient: to,
      subject: 'Your sign-in code',
      kind: 'login_code',
      attempts: 1,
      text_body: null,
      html_body: null,
      code: null,
      given_up_at: null,
      last_error: null,
    });
    // The job is done and gone; it never held the code (its payload is the mail's id).
    await w.runDue();
    expect(await jobsOf(row!.id)).toEqual([]);
  });

  it('renders the German template for language de-AT', async () => {
    const w = await worker();
    const to = address('de');
    await enqueue({
      to,
      kind: 'verify_email',
      language: 'de-AT',
      data: { link: 'https://app.example.com/verify?token=t0k3n' },
    });
    await w.runDue();
    const mail = await peer.waitFor((x) => x.to.includes(to));
    expect(mail.subject).toBe('Bestätigen Sie Ihre E-Mail-Adresse');
    expect(mail.text).toContain('Öffnen Sie diesen Link');
    expect(mail.text).toContain('\nhttps://app.example.com/verify?token=t0k3n\n');
    expect(mail.html).toContain('<html lang="de">');
    expect(mail.html).toContain('<a href="https://app.example.com/verify?token=t0k3n">');
  });

  it('never sends a mail queued in a transaction that rolled back, nor keeps its job', async () => {
    const w = await worker();
    const to = address('rollback');
    const jobsBefore = await mailJobCount();
    await expect(
      sql.begin(async (tx) => {
        await enqueueMail(tx, loginCode(to), new Date());
        throw new Error('the state change failed');
      }),
    ).rejects.toThrow('the state change failed');

    expect(await w.runDue()).toBe(0);
    expect(await rowsFor(to)).toEqual([]);
    expect(await mailJobCount()).toBe(jobsBefore);
    expect(peer.messages.filter((x) => x.to.includes(to))).toEqual([]);
  });

  it('two workers on one database deliver each of 30 mails exactly once', async () => {
    // Two "processes": separate connection pools, queue pools and LISTEN connections on one database.
    const sqlA = connect(db.url, { max: 3 });
    const sqlB = connect(db.url, { max: 3 });
    cleanups.push(
      () => sqlA.end({ timeout: 1 }),
      () => sqlB.end({ timeout: 1 }),
    );
    const a = await worker({ sql: sqlA });
    const b = await worker({ sql: sqlB });

    const recipients = Array.from({ length: 30 }, () => address('pair'));
    const before = peer.messages.length;
    // Separate commits, so NOTIFYs keep both workers busy while they compete for jobs.
    await Promise.all(recipients.map((to, i) => enqueue(loginCode(to, String(100000 + i)))));
    await Promise.all([a.runDue(), b.runDue()]);
    await eventually(async () => {
      const [{ n }] = await sql<[{ n: number }]>`
        select count(*)::int as n from mail_outbox where recipient = any(${recipients}) and sent_at is not null`;
      return n === 30;
    });

    const delivered = peer.messages.slice(before);
    expect(delivered).toHaveLength(30);
    expect(new Set(delivered.map((x) => x.headers['x-outbox-id'])).size).toBe(30);
    expect(new Set(delivered.flatMap((x) => x.to))).toEqual(new Set(recipients));
    const attempts = await sql<
      { attempts: number }[]
    >`select attempts from mail_outbox where recipient = any(${recipients})`;
    // Each mail was attempted exactly once: a second run of its job would have counted a second attempt.
    expect(attempts.map((r) => r.attempts)).toEqual(Array(30).fill(1));
    const sentBy = [a, b].map((x) => x.lines.filter((l) => l.msg === 'mail sent').length);
    expect(sentBy[0]! + sentBy[1]!).toBe(30);
  });

  it('retries a refused recipient with backoff, records the error, and delivers once accepted', async () => {
    const clock = new TestClock();
    const to = address('busy');
    peer.refuse = (rcpt) =>
      rcpt === to ? { responseCode: 451, message: 'Mailbox busy, try again later' } : null;
    const w = await worker({ clock });
    await enqueue(loginCode(to, '771204'), clock.now());

    // The first attempt follows the commit at once; runDue() now would bring its retry forward too.
    let [row] = await failedOnce(to);
    expect(row).toMatchObject({ attempts: 1, sent_at: null, given_up_at: null });
    expect(row!.last_error).toMatch(/451 Mailbox busy/);
    expect(row!.next_attempt_at).toEqual(new Date(clock.now().getTime() + retryDelayMs(1)));
    expect(row!.text_body).toContain('771204'); // kept until it is sent
    // The retry is one job waiting in the queue for the backoff (on the database's clock).
    let [job, ...more] = await jobsOf(row!.id);
    expect(more).toEqual([]);
    expect(job!.waitMs).toBeGreaterThan(retryDelayMs(1) - 5_000);
    expect(job!.waitMs).toBeLessThanOrEqual(retryDelayMs(1));

    clock.advance(retryDelayMs(1));
    await w.runDue(); // what the queue does when the backoff is over
    [row] = await rowsFor(to);
    expect(row).toMatchObject({ attempts: 2, sent_at: null });
    expect(row!.next_attempt_at).toEqual(new Date(clock.now().getTime() + retryDelayMs(2)));
    [job, ...more] = await jobsOf(row!.id);
    expect(more).toEqual([]);
    expect(job!.waitMs).toBeGreaterThan(retryDelayMs(2) - 5_000);

    peer.refuse = null;
    clock.advance(retryDelayMs(2));
    await w.runDue();
    [row] = await rowsFor(to);
    expect(row).toMatchObject({
      attempts: 3,
      sent_at: clock.now(),
      text_body: null,
      html_body: null,
      code: null,
    });
    expect(row!.last_error).toMatch(/451/); // the history of the failure stays
    expect(peer.messages.filter((x) => x.to.includes(to))).toHaveLength(1);
    expect(await jobsOf(row!.id)).toEqual([]);

    const warnings = w.lines.filter((l) => l.msg === 'mail delivery failed; will retry');
    expect(warnings).toHaveLength(2);
    expect(JSON.stringify(w.lines)).not.toContain('771204');
  });

  it('gives up at once on a recipient the server refuses for good', async () => {
    const to = address('nosuchuser');
    peer.refuse = (rcpt) => (rcpt === to ? { responseCode: 550, message: 'No such user here' } : null);
    const w = await worker();
    await enqueue(loginCode(to));
    await w.runDue();
    const [row] = await rowsFor(to);
    expect(row).toMatchObject({ attempts: 1, sent_at: null, text_body: null, html_body: null, code: null });
    expect(row!.given_up_at).toBeInstanceOf(Date);
    expect(row!.last_error).toMatch(/550 No such user here/);
    expect(await jobsOf(row!.id)).toEqual([]);
    expect(w.lines.some((l) => l.msg === 'mail given up' && l.level === 50)).toBe(true);
  });

  it(`gives up after ${MAX_ATTEMPTS} failed attempts and erases the bodies`, async () => {
    const clock = new TestClock();
    const closed = await startTestSmtp();
    const deadUrl = closed.url;
    await closed.close(); // nothing listens on that port any more
    const w = await worker({ clock, config: env({ SMTP_URL: deadUrl }) });
    const to = address('unreachable');
    await enqueue(loginCode(to), clock.now());
    await failedOnce(to);

    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      if (attempt > 1) await w.runDue(); // the backoff is over
      const [row] = await rowsFor(to);
      expect(row!.attempts).toBe(attempt);
      expect(row!.last_error).toMatch(/ECONNREFUSED/);
      if (attempt < MAX_ATTEMPTS) {
        expect(row!.given_up_at).toBeNull();
        clock.advance(retryDelayMs(attempt));
      } else {
        expect(row).toMatchObject({ given_up_at: clock.now(), text_body: null, html_body: null, code: null });
        expect(await jobsOf(row!.id)).toEqual([]);
      }
    }
    clock.advance(24 * 3600_000);
    await w.runDue();
    expect((await rowsFor(to))[0]!.attempts).toBe(MAX_ATTEMPTS);
  });

  it(`gives up, sending nothing, a mail whose ${MAX_ATTEMPTS} attempts all ended with their worker`, async () => {
    // Attempts are counted when they start; runs that never recorded an outcome (the mail crashed its
    // workers, or they were killed while sending it) leave the count at the last attempt.
    const to = address('poison');
    await enqueue(loginCode(to, '909090'));
    const [queued] = await rowsFor(to);
    await sql`update mail_outbox set attempts = ${MAX_ATTEMPTS} where id = ${queued!.id}`;
    const w = await worker();
    await w.runDue();
    const [row] = await rowsFor(to);
    expect(row).toMatchObject({
      attempts: MAX_ATTEMPTS + 1,
      sent_at: null,
      text_body: null,
      html_body: null,
      code: null,
    });
    expect(row!.given_up_at).toBeInstanceOf(Date);
    expect(row!.last_error).toMatch(/no delivery attempt finished/);
    expect(peer.messages.filter((x) => x.to.includes(to))).toEqual([]);
  });

  it('signs in with the credentials in SMTP_URL and keeps a wrong password out of the row and the log', async () => {
    const auth = { user: 'mailer', pass: 'p@ss w0rd/secret' };
    const guarded = await startTestSmtp({ auth });
    cleanups.push(() => guarded.close());

    const good = await worker({ config: env({ SMTP_URL: guarded.urlWith(auth) }) });
    const to = address('auth');
    await enqueue(loginCode(to));
    await good.runDue();
    expect((await guarded.waitFor((x) => x.to.includes(to))).authUser).toBe('mailer');
    await good.stop();

    const wrongPassword = 'Wr0ng-Passw0rd-4711';
    const bad = await worker({
      config: env({ SMTP_URL: guarded.urlWith({ user: 'mailer', pass: wrongPassword }) }),
    });
    const other = address('auth');
    await enqueue(loginCode(other));
    await bad.runDue();
    const [row] = await rowsFor(other);
    expect(row!.last_error).toMatch(/^EAUTH: .*535/);
    expect(row!.given_up_at).toBeNull(); // a configuration can be fixed: retried
    expect(row!.last_error).not.toContain(wrongPassword);
    expect(JSON.stringify(bad.lines)).not.toContain(wrongPassword);
  });

  it('sends mail queued before it started', async () => {
    const to = address('early');
    await enqueue(loginCode(to));
    await worker();
    await peer.waitFor((x) => x.to.includes(to), 1000);
  });

  it('stop() is idempotent and refuses runDue(); mail queued meanwhile waits for the next worker', async () => {
    const w = await worker();
    await w.stop();
    await w.stop();
    await expect(w.runDue()).rejects.toThrow(/stopped/);
    const to = address('after-stop');
    await enqueue(loginCode(to));
    const [row] = await rowsFor(to);
    expect(row!.attempts).toBe(0);
    expect(await jobsOf(row!.id)).toHaveLength(1);

    await worker();
    await peer.waitFor((x) => x.to.includes(to), 1000);
  });
});

describe('without SMTP_URL: .eml files in DATA_DIR/outbox', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'svc-mail-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('writes one RFC 822 file per mail, readable by the owner only, and logs no code outside development', async () => {
    const clock = new TestClock(new Date('2026-11-21T12:34:56.789Z'));
    const m = await worker({ clock, config: env({ SMTP_URL: undefined, DATA_DIR: dataDir }) });
    const to = address('file');
    await enqueue(loginCode(to, '640512', 'de-AT'), clock.now());
    await m.runDue();

    const [row] = await rowsFor(to);
    const outbox = join(dataDir, 'outbox');
    const files = (await readdir(outbox)).filter((f) => f.includes(row!.id));
    expect(files).toEqual([`20261121T123456Z_${row!.id}.eml`]);
    const file = join(outbox, files[0]!);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(outbox)).mode & 0o777).toBe(0o700);

    const mail = parseMail(await readFile(file, 'utf8'));
    expect(mail.headers.to).toBe(to);
    expect(mail.headers.from).toBe('Hosting Platform <no-reply@app.example.com>');
    expect(mail.subject).toBe('Ihr Anmeldecode');
    expect(mail.text).toContain('Ihr Anmeldecode lautet:\n\n640512\n');
    expect(mail.text).toContain('10 Minuten gültig');
    expect(mail.html).toContain('<html lang="de">');
    expect(row).toMatchObject({ text_body: null, html_body: null, code: null, attempts: 1 });
    expect(row!.sent_at).toEqual(clock.now());

    expect(JSON.stringify(m.lines)).not.toContain('640512');
    expect(JSON.stringify(m.lines)).not.toContain(to);
  });

  it('in development logs the recipient and the sign-in code, and never a link', async () => {
    const m = await worker({
      config: env({ SMTP_URL: undefined, DATA_DIR: dataDir, NODE_ENV: 'development' }),
    });
    const to = address('dev');
    await enqueue(loginCode(to, '305918'));
    await enqueue({
      to,
      kind: 'password_reset',
      language: 'en',
      data: { link: 'https://app.example.com/reset?token=S3CR3T' },
    });
    // The worker may already have taken them on their NOTIFY; runDue waits for those too.
    await m.runDue();

    const written = m.lines.filter((l) => l.msg === 'mail written to outbox' && l.to === to);
    expect(written).toHaveLength(2);
    const byKind = Object.fromEntries(written.map((l) => [l.kind, l]));
    expect(byKind.login_code).toMatchObject({ to, code: '305918', level: 30 });
    expect(byKind.login_code!.file).toMatch(/\.eml$/);
    expect(byKind.password_reset).not.toHaveProperty('code');
    expect(JSON.stringify(m.lines)).not.toContain('S3CR3T');
  });
});

describe('enqueueMail', () => {
  it.each([
    ['a list', 'a@example.test, b@example.test'],
    ['a display name', 'Someone <a@example.test>'],
    ['a header break', 'a@example.test\r\nBcc: b@example.test'],
    ['no domain', 'a@'],
    ['empty', ''],
  ])('refuses %s as recipient and stores nothing', async (_name, to) => {
    const jobsBefore = await mailJobCount();
    await expect(enqueue(loginCode(to))).rejects.toThrow(/one bare email address/);
    expect(await mailJobCount()).toBe(jobsBefore);
    const [{ n }] = await sql<
      [{ n: number }]
    >`select count(*)::int as n from mail_outbox where recipient = ${to}`;
    expect(n).toBe(0);
  });
});
