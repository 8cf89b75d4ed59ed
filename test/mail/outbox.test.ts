// The mail outbox end to end: enqueueMail in a real transaction, the sender against a real SMTP server
// (smtp-server on loopback) and against the file transport, on a fresh PostgreSQL database.
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../server/src/config.js';
import { connect, type Sql } from '../../server/src/db/client.js';
import { createLogger } from '../../server/src/http/logging.js';
import { enqueueMail, type OutgoingMail } from '../../server/src/mail/outbox.js';
import { MAX_ATTEMPTS, retryDelayMs } from '../../server/src/mail/retry.js';
import { startMailer, type Mailer, type MailerOptions } from '../../server/src/mail/sender.js';
import { findMail, type MailEnvelopeRow } from '../../server/src/mail/store.js';
import { createTestDatabase, TestClock } from '../support/app.js';
import { parseMail } from '../support/mime.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

type MailConfig = MailerOptions['config'];

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
  // Mailers first (they use the connections and the peer), then whatever else the test opened.
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  peer.refuse = null;
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

function config(overrides: Partial<MailConfig> = {}): MailConfig {
  return {
    smtpUrl: peer.url,
    dataDir: join(tmpdir(), 'svc-mail-unused'),
    environment: 'test' satisfies Config['environment'],
    publicBaseUrl: 'https://app.example.com',
    ...overrides,
  };
}

async function mailer(
  options: Partial<MailerOptions> = {},
): Promise<Mailer & { lines: Record<string, unknown>[] }> {
  const { log, lines } = captureLog();
  const m = await startMailer({ sql, config: config(), log, pollMs: 60_000, ...options });
  cleanups.push(() => m.stop());
  return Object.assign(m, { lines });
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
  it('delivers a committed mail within a second, woken by NOTIFY, then erases its bodies', async () => {
    // Polls once a minute, and its start-up look at the table is over once flush() returns: from
    // here only NOTIFY can wake it this quickly.
    const m = await mailer();
    await m.flush();
    const to = address('notify');
    const started = Date.now();
    await enqueue(loginCode(to, '582014'));
    const mail = await peer.waitFor((m) => m.to.includes(to), 1000);
    expect(Date.now() - started).toBeLessThan(1000);

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
      locked_until: null,
    });
  });

  it('renders the German template for language de-AT', async () => {
    const m = await mailer();
    const to = address('de');
    await enqueue({
      to,
      kind: 'verify_email',
      language: 'de-AT',
      data: { link: 'https://app.example.com/verify?token=t0k3n' },
    });
    expect(await m.flush()).toBe(1);
    const mail = await peer.waitFor((x) => x.to.includes(to));
    expect(mail.subject).toBe('Bestätigen Sie Ihre E-Mail-Adresse');
    expect(mail.text).toContain('Öffnen Sie diesen Link');
    expect(mail.text).toContain('\nhttps://app.example.com/verify?token=t0k3n\n');
    expect(mail.html).toContain('<html lang="de">');
    expect(mail.html).toContain('<a href="https://app.example.com/verify?token=t0k3n">');
  });

  it('never sends a mail queued in a transaction that rolled back', async () => {
    const m = await mailer();
    const to = address('rollback');
    await expect(
      sql.begin(async (tx) => {
        await enqueueMail(tx, loginCode(to), new Date());
        throw new Error('the state change failed');
      }),
    ).rejects.toThrow('the state change failed');

    expect(await m.flush()).toBe(0);
    await new Promise((r) => setTimeout(r, 200));
    expect(await rowsFor(to)).toEqual([]);
    expect(peer.messages.filter((x) => x.to.includes(to))).toEqual([]);
  });

  it('two mailers on one database deliver each of 30 mails exactly once', async () => {
    // Two "processes": separate connection pools and LISTEN connections on the same database.
    const sqlA = connect(db.url, { max: 3 });
    const sqlB = connect(db.url, { max: 3 });
    cleanups.push(
      () => sqlA.end({ timeout: 1 }),
      () => sqlB.end({ timeout: 1 }),
    );
    const a = await mailer({ sql: sqlA });
    const b = await mailer({ sql: sqlB });

    const recipients = Array.from({ length: 30 }, () => address('pair'));
    const before = peer.messages.length;
    // Separate commits, so NOTIFYs keep both loops busy while they compete for rows.
    await Promise.all(recipients.map((to, i) => enqueue(loginCode(to, String(100000 + i)))));
    await Promise.all([a.flush(), b.flush()]);
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
    // Each row was claimed exactly once: a second claim would have counted a second attempt.
    expect(attempts.map((r) => r.attempts)).toEqual(Array(30).fill(1));
    const sentBy = [a, b].map((x) => x.lines.filter((l) => l.msg === 'mail sent').length);
    expect(sentBy[0]! + sentBy[1]!).toBe(30);
  });

  it('retries a refused recipient with backoff, records the error, and delivers once accepted', async () => {
    const clock = new TestClock();
    const to = address('busy');
    peer.refuse = (rcpt) =>
      rcpt === to ? { responseCode: 451, message: 'Mailbox busy, try again later' } : null;
    const m = await mailer({ clock });
    await enqueue(loginCode(to, '771204'), clock.now());

    expect(await m.flush()).toBe(0);
    let [row] = await rowsFor(to);
    expect(row).toMatchObject({ attempts: 1, sent_at: null, given_up_at: null, locked_until: null });
    expect(row!.last_error).toMatch(/451 Mailbox busy/);
    expect(row!.next_attempt_at).toEqual(new Date(clock.now().getTime() + retryDelayMs(1)));
    expect(row!.text_body).toContain('771204'); // kept until it is sent

    // Not due yet: nothing happens however often the sender looks.
    clock.advance(retryDelayMs(1) - 1);
    expect(await m.flush()).toBe(0);
    expect((await rowsFor(to))[0]!.attempts).toBe(1);

    clock.advance(1);
    expect(await m.flush()).toBe(0);
    [row] = await rowsFor(to);
    expect(row).toMatchObject({ attempts: 2, sent_at: null });
    expect(row!.next_attempt_at).toEqual(new Date(clock.now().getTime() + retryDelayMs(2)));

    peer.refuse = null;
    clock.advance(retryDelayMs(2));
    expect(await m.flush()).toBe(1);
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

    const warnings = m.lines.filter((l) => l.msg === 'mail delivery failed; will retry');
    expect(warnings).toHaveLength(2);
    expect(JSON.stringify(m.lines)).not.toContain('771204');
  });

  it('gives up at once on a recipient the server refuses for good', async () => {
    const to = address('nosuchuser');
    peer.refuse = (rcpt) => (rcpt === to ? { responseCode: 550, message: 'No such user here' } : null);
    const m = await mailer();
    await enqueue(loginCode(to));
    await m.flush();
    const [row] = await rowsFor(to);
    expect(row).toMatchObject({ attempts: 1, sent_at: null, text_body: null, html_body: null, code: null });
    expect(row!.given_up_at).toBeInstanceOf(Date);
    expect(row!.last_error).toMatch(/550 No such user here/);
    expect(m.lines.some((l) => l.msg === 'mail given up' && l.level === 50)).toBe(true);
  });

  it(`gives up after ${MAX_ATTEMPTS} failed attempts and erases the bodies`, async () => {
    const clock = new TestClock();
    const closed = await startTestSmtp();
    const deadUrl = closed.url;
    await closed.close(); // nothing listens on that port any more
    const m = await mailer({ clock, config: config({ smtpUrl: deadUrl }) });
    const to = address('unreachable');
    await enqueue(loginCode(to), clock.now());

    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      expect(await m.flush()).toBe(0);
      const [row] = await rowsFor(to);
      expect(row!.attempts).toBe(attempt);
      expect(row!.last_error).toMatch(/ECONNREFUSED/);
      if (attempt < MAX_ATTEMPTS) {
        expect(row!.given_up_at).toBeNull();
        clock.advance(retryDelayMs(attempt));
      } else {
        expect(row).toMatchObject({ given_up_at: clock.now(), text_body: null, html_body: null, code: null });
      }
    }
    clock.advance(24 * 3600_000);
    expect(await m.flush()).toBe(0);
    expect((await rowsFor(to))[0]!.attempts).toBe(MAX_ATTEMPTS);
  });

  it('signs in with the credentials in SMTP_URL and keeps a wrong password out of the row and the log', async () => {
    const auth = { user: 'mailer', pass: 'p@ss w0rd/secret' };
    const guarded = await startTestSmtp({ auth });
    cleanups.push(() => guarded.close());

    const good = await mailer({ config: config({ smtpUrl: guarded.urlWith(auth) }) });
    const to = address('auth');
    await enqueue(loginCode(to));
    expect(await good.flush()).toBe(1);
    expect((await guarded.waitFor((x) => x.to.includes(to))).authUser).toBe('mailer');
    await good.stop();

    const wrongPassword = 'Wr0ng-Passw0rd-4711';
    const bad = await mailer({
      config: config({ smtpUrl: guarded.urlWith({ user: 'mailer', pass: wrongPassword }) }),
    });
    const other = address('auth');
    await enqueue(loginCode(other));
    expect(await bad.flush()).toBe(0);
    const [row] = await rowsFor(other);
    expect(row!.last_error).toMatch(/^EAUTH: .*535/);
    expect(row!.given_up_at).toBeNull(); // a configuration can be fixed: retried
    expect(row!.last_error).not.toContain(wrongPassword);
    expect(JSON.stringify(bad.lines)).not.toContain(wrongPassword);
  });

  it('sends mail queued before it started', async () => {
    const to = address('early');
    await enqueue(loginCode(to));
    await mailer();
    await peer.waitFor((x) => x.to.includes(to), 1000);
  });

  it('stop() ends the loop and a later flush() is refused', async () => {
    const m = await mailer();
    await m.stop();
    await m.stop(); // idempotent
    await expect(m.flush()).rejects.toThrow(/stopped/);
    const to = address('after-stop');
    await enqueue(loginCode(to));
    await new Promise((r) => setTimeout(r, 200));
    expect((await rowsFor(to))[0]!.sent_at).toBeNull();
    await sql`delete from mail_outbox where recipient = ${to}`;
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
    const m = await mailer({ clock, config: config({ smtpUrl: null, dataDir }) });
    const to = address('file');
    await enqueue(loginCode(to, '640512', 'de-AT'), clock.now());
    expect(await m.flush()).toBe(1);

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
    const m = await mailer({ config: config({ smtpUrl: null, dataDir, environment: 'development' }) });
    const to = address('dev');
    await enqueue(loginCode(to, '305918'));
    await enqueue({
      to,
      kind: 'password_reset',
      language: 'en',
      data: { link: 'https://app.example.com/reset?token=S3CR3T' },
    });
    // The sender may already have taken the first on its NOTIFY; flush waits for that drain too.
    await m.flush();

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
    await expect(enqueue(loginCode(to))).rejects.toThrow(/one bare email address/);
    const [{ n }] = await sql<
      [{ n: number }]
    >`select count(*)::int as n from mail_outbox where recipient = ${to}`;
    expect(n).toBe(0);
  });
});
