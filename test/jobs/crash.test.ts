// Jobs survive kill -9: real server processes (server/src/main.ts and scripts/worker.ts, each from its
// bundle: test/support/program.ts) on a test database, killed with SIGKILL in the middle
// of their work, and the mail still arrives at a real SMTP server once, from the next process.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { connect, type Sql } from '../../server/src/db/client.js';
import { enqueueMail } from '../../server/src/mail/outbox.js';
import { createTestDatabase } from '../support/app.js';
import { parseMail, type ParsedMail } from '../support/mime.js';
import { eventually, gate } from './support.js';
import { serverArgs } from '../support/program.js';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let sql: Sql;
const children: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  sql = connect(db.url, { max: 2 });
});
afterEach(async () => {
  // A process a failed test left running would take the next test's jobs.
  await Promise.all(
    children
      .splice(0)
      .filter((c) => c.exitCode === null && c.signalCode === null)
      .map(kill9),
  );
});
afterAll(async () => {
  await sql.end({ timeout: 1 });
  await db.drop();
});

/**
 * An SMTP server that holds the DATA of the first `stall` messages unanswered (the sender waits, mid-
 * delivery) and accepts the rest.
 */
async function smtpServer(stall: number) {
  const accepted: (ParsedMail & { to: string[] })[] = [];
  const stalled = gate();
  let toStall = stall;
  const server = new SMTPServer({
    logger: false,
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (d: Buffer) => (raw += d.toString('utf8')));
      stream.on('end', () => {
        if (toStall > 0) {
          toStall -= 1;
          stalled.open();
          return; // never answered
        }
        accepted.push({ ...parseMail(raw), to: session.envelope.rcptTo.map((r) => r.address) });
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    accepted,
    stalled: stalled.promise,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Starts `script` (main.ts or worker.ts) on the test database; resolves once it says it runs. */
async function start(script: string, env: Record<string, string>, ready: RegExp) {
  const child = spawn(process.execPath, await serverArgs(script), {
    env: {
      ...process.env,
      PORT: '0',
      DATABASE_URL: db.url,
      DATA_DIR: join(process.cwd(), '.tmp', 'test-data'),
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const check = () => {
      const m = ready.exec(out);
      if (m) resolve(m);
    };
    child.stdout!.on('data', check);
    child.on('exit', (code, signal) => reject(new Error(`${script} exited (${code ?? signal}):\n${out}`)));
  });
  return { child, match, output: () => out };
}

const API = /API\s+(http:\/\/[\d.:]+)\/api\/v2/;

async function kill9(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

it(
  'a mail in delivery when its server is killed -9 is delivered by the next server, once',
  { timeout: 90_000 },
  async () => {
    const smtp = await smtpServer(1);
    try {
      const first = await start('server/src/main.ts', { SMTP_URL: smtp.url }, API);
      await sql.begin((tx) =>
        enqueueMail(
          tx,
          {
            to: 'crash@example.test',
            kind: 'login_code',
            language: 'en',
            data: { code: '424242', expiresMinutes: 10 },
          },
          new Date(),
        ),
      );
      // The first server's worker holds the job and waits for the SMTP server's answer to the message.
      await smtp.stalled;
      const [job] = await sql<{ id: string; locked_by: string | null }[]>`
      select id, locked_by from graphile_worker.jobs where task_identifier = 'send_mail'`;
      expect(job!.locked_by).toMatch(/^pool-/);

      await kill9(first.child);
      // Killed, not stopped: the job stays locked by the dead worker (graphile-worker alone would wait
      // four hours before giving it to another).
      expect(
        (await sql`select locked_by from graphile_worker.jobs where id = ${job!.id}`)[0]!.locked_by,
      ).toBe(job!.locked_by);

      const second = await start('server/src/main.ts', { SMTP_URL: smtp.url }, API);
      await eventually(async () => smtp.accepted.length > 0, 15_000);
      expect(smtp.accepted.map((m) => m.to)).toEqual([['crash@example.test']]);
      expect(smtp.accepted[0]!.text).toContain('424242');

      const [row] = await eventually(async () => {
        const rows = await sql<{ sent_at: Date | null; attempts: number; text_body: string | null }[]>`
        select sent_at, attempts, text_body from mail_outbox where recipient = 'crash@example.test'`;
        return rows[0]?.sent_at ? rows : null;
      });
      // One attempt per process: at least once, and here exactly once accepted.
      expect(row).toMatchObject({ attempts: 2, text_body: null });
      expect(row!.sent_at).toBeInstanceOf(Date);
      await eventually(
        async () => (await sql`select 1 from graphile_worker.jobs where id = ${job!.id}`).length === 0,
      );
      expect(second.output()).toMatch(/jobs of a job worker that died were unlocked/);

      const exited = once(second.child, 'exit');
      second.child.kill('SIGTERM');
      expect((await exited)[0]).toBe(0);
    } finally {
      await smtp.close();
    }
  },
);

it(
  'a sign-up queued by an API process with WORKER=off survives its kill -9 and is completed and mailed by `npm run worker`',
  { timeout: 90_000 },
  async () => {
    const smtp = await smtpServer(0);
    try {
      const api = await start('server/src/main.ts', { SMTP_URL: smtp.url, WORKER: 'off' }, API);
      expect(api.output()).toContain('WORKER=off');
      // Signing up queues its job in the request's transaction (the account, then its verification mail,
      // are made by the job: issue 26).
      const res = await fetch(`${api.match[1]}/api/v2/auth/password/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          email: 'queued@example.test',
          password: 'correct horse battery staple',
          name: 'Queued',
        }),
      });
      expect(res.status).toBeLessThan(300);
      await kill9(api.child);
      const [waiting] = await sql<{ jobs: number; pending: number }[]>`
      select (select count(*)::int from graphile_worker.jobs
              where task_identifier = 'complete_signup' and locked_at is null) as jobs,
             (select count(*)::int from pending_signups where email = 'queued@example.test') as pending`;
      expect(waiting).toEqual({ jobs: 1, pending: 1 });
      expect(smtp.accepted).toEqual([]);

      const worker = await start('scripts/worker.ts', { SMTP_URL: smtp.url }, /job worker running/);
      await eventually(async () => smtp.accepted.length > 0, 15_000).catch((err: unknown) => {
        throw new Error(`${String(err)}\n${worker.output()}`);
      });
      expect(smtp.accepted.map((m) => m.to)).toEqual([['queued@example.test']]);
      expect(smtp.accepted[0]!.text).toMatch(/token=/);

      const exited = once(worker.child, 'exit');
      worker.child.kill('SIGTERM');
      expect((await exited)[0]).toBe(0);
    } finally {
      await smtp.close();
    }
  },
);
