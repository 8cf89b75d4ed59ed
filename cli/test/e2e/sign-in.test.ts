// Signing in with svcctl against the real server and real mail: login (on a terminal, through pipes,
// and in two non-interactive steps), the saved session and its transparent refresh, sessions, logout,
// password change, signup and reset, and the exit codes of what goes wrong.
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createClient, isSvcApiError } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { revokeSession } from '../../../server/src/features/auth/store.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { codeIn, logIn, signUp, tokenIn, uniqueEmail } from '../../../test/support/auth.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { writeCredentials } from '../../src/credentials.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { converse, hasScript } from '../support/interactive.js';
import { closedPort, runCli, tempHome, type CliRun } from '../support/run-cli.js';

let app: TestApp;
let smtp: TestSmtp;
const MINUTE = 60_000;
const PASSWORD = 'correct horse battery staple';

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  // Many sign-ins from one loopback address: only the per-address limits are left to trip.
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

type Home = ReturnType<typeof tempHome>;

const svcctl = (home: Home, args: string[], run: CliRun = {}) =>
  runCli(args, { ...run, env: { ...home, SVCCTL_BASE_URL: app.baseUrl, ...run.env } });

const credentialsFile = (home: Home) => join(home.SVCCTL_CONFIG_DIR, 'credentials.yaml');

interface SavedCredentials {
  token?: string;
  refresh_token?: string;
  session_id?: string;
}

async function saved(home: Home, profile = 'default'): Promise<SavedCredentials | undefined> {
  const text = await readFile(credentialsFile(home), 'utf8').catch(() => '');
  const doc = (parseYaml(text) ?? {}) as { profiles?: Record<string, SavedCredentials> };
  return doc.profiles?.[profile];
}

/** A new, verified account (through the SDK: what is under test here is svcctl's sign-in). */
async function account(tag: string, password = PASSWORD): Promise<{ email: string; password: string }> {
  const email = uniqueEmail(tag);
  await signUp(app, smtp, email, password);
  return { email, password };
}

/** The code of the next login mail to `email` after `seen` messages. */
async function loginCode(email: string, seen: number): Promise<string> {
  const mail = await smtp.waitFor(
    (m) => m.to.includes(email) && smtp.messages.indexOf(m) >= seen && /\b\d{6}\b/.test(m.text),
  );
  return codeIn(mail);
}

/** `svcctl login` in its two non-interactive steps; the saved credentials. */
async function cliLogin(home: Home, email: string, password = PASSWORD): Promise<Required<SavedCredentials>> {
  const seen = smtp.messages.length;
  const first = await svcctl(home, ['login', '--non-interactive', '--email', email, '--password-stdin'], {
    input: `${password}\n`,
  });
  expect(first.stderr).toBe('');
  expect(first.code).toBe(0);
  const { challenge_id } = JSON.parse(first.stdout) as { challenge_id: string };
  const code = await loginCode(email, seen);
  const second = await svcctl(home, [
    'login',
    '--non-interactive',
    '--challenge-id',
    challenge_id,
    '--code',
    code,
  ]);
  expect(second.stderr).toBe('');
  expect(second.code).toBe(0);
  return (await saved(home)) as Required<SavedCredentials>;
}

const sessionOf = (stdout: string) => JSON.parse(stdout) as { session_id: string; user: { email: string } };

describe('svcctl login, interactively', () => {
  it.skipIf(!hasScript)('on a terminal: the password is never shown, the session is saved 0600', async () => {
    const { email, password } = await account('tty');
    const home = tempHome();
    const seen = smtp.messages.length;
    const tty = converse(['login'], { terminal: true, env: { ...home, SVCCTL_BASE_URL: app.baseUrl } });
    await tty.waitFor('Email: ');
    tty.type(`${email}\n`);
    await tty.waitFor('Password: ');
    tty.type(`${password}\n`);
    await tty.waitFor('Code: ');
    tty.type(`${await loginCode(email, seen)}\n`);
    expect(await tty.exit).toBe(0);

    const shown = tty.output();
    expect(shown).toContain(`Email: ${email}\n`); // typed text is echoed as usual...
    expect(shown).not.toContain(password); // ...but not the password
    expect(shown).not.toContain(password.slice(0, 4));
    expect(shown).toContain(`Signed in as Test Person <${email}> (profile "default").`);

    const creds = await saved(home);
    expect(creds).toEqual({
      token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      refresh_token: expect.stringMatching(/^svc_rt_/),
      session_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(statSync(credentialsFile(home)).mode & 0o777).toBe(0o600);
    expect(statSync(home.SVCCTL_CONFIG_DIR).mode & 0o777).toBe(0o700);

    const session = await svcctl(home, ['session']);
    expect(session.code).toBe(0);
    expect(sessionOf(session.stdout)).toMatchObject({ session_id: creds!.session_id, user: { email } });
  });

  it.skipIf(!hasScript)('asks again for a mistyped code on a terminal', async () => {
    const { email, password } = await account('tty-retry');
    const home = tempHome();
    const seen = smtp.messages.length;
    const tty = converse(['login', '--email', email], {
      terminal: true,
      env: { ...home, SVCCTL_BASE_URL: app.baseUrl },
    });
    await tty.waitFor('Password: ');
    tty.type(`${password}\n`);
    const code = await loginCode(email, seen);
    await tty.waitFor('Code: ');
    tty.type('12345\n');
    await tty.waitFor('The code is the 6 digits from the email.');
    await tty.waitFor('Code: ');
    tty.type(`${code === '000000' ? '000001' : '000000'}\n`);
    await tty.waitFor('That code is wrong or has expired; try again.');
    await tty.waitFor('Code: ');
    tty.type(`${code}\n`);
    expect(await tty.exit).toBe(0);
    expect((await saved(home))?.refresh_token).toMatch(/^svc_rt_/);
  });

  it('through pipes: prompts on stderr, answers read line by line from stdin', async () => {
    const { email, password } = await account('piped');
    const home = tempHome();
    const seen = smtp.messages.length;
    const piped = converse(['login'], { terminal: false, env: { ...home, SVCCTL_BASE_URL: app.baseUrl } });
    piped.type(`${email}\n${password}\n`);
    const code = await loginCode(email, seen);
    await piped.waitFor('Code: ');
    piped.type(`${code}\n`);
    piped.end();
    expect(await piped.exit).toBe(0);
    expect(piped.stdout()).toBe('');
    expect(piped.stderr()).toBe(
      [
        'Email: Password: A 6-digit code was emailed to ' + email + '; it is valid for 10 minutes.',
        `Code: Signed in as Test Person <${email}> (profile "default").`,
        '',
      ].join('\n'),
    );
    expect((await saved(home))?.refresh_token).toMatch(/^svc_rt_/);
  });

  it('prints the session in the output format asked for with -o', async () => {
    const { email, password } = await account('piped-json');
    const home = tempHome();
    const seen = smtp.messages.length;
    const piped = converse(
      ['login', '-o', 'json', '--email', email, '--password-stdin', '--profile', 'work'],
      {
        terminal: false,
        env: { ...home, SVCCTL_BASE_URL: app.baseUrl },
      },
    );
    piped.type(`${password}\n`);
    piped.type(`${await loginCode(email, seen)}\n`);
    piped.end();
    expect(await piped.exit).toBe(0);
    const printed = JSON.parse(piped.stdout()) as Record<string, unknown>;
    expect(printed).toEqual({
      profile: 'work',
      session_id: (await saved(home, 'work'))?.session_id,
      user: { id: expect.any(String), name: 'Test Person', email, language: 'en' },
    });
    expect(piped.stdout()).not.toContain('svc_rt_');
  });
});

describe('svcctl login --non-interactive', () => {
  it('prints the challenge, then signs in with --challenge-id and --code and prints the session as JSON', async () => {
    const { email } = await account('script');
    const home = tempHome();
    const seen = smtp.messages.length;
    const first = await svcctl(home, ['login', '--non-interactive', '--email', email, '--password-stdin'], {
      input: `${PASSWORD}\n`,
    });
    expect(first).toMatchObject({ code: 0, stderr: '' });
    const challenge = JSON.parse(first.stdout) as { challenge_id: string; status: string };
    expect(challenge).toEqual({
      challenge_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'code_sent',
    });
    expect(await saved(home)).toBeUndefined();

    const code = await loginCode(email, seen);
    const second = await svcctl(home, [
      'login',
      '--non-interactive',
      '--challenge-id',
      challenge.challenge_id,
      '--code',
      code,
    ]);
    expect(second).toMatchObject({ code: 0, stderr: '' });
    const creds = await saved(home);
    expect(JSON.parse(second.stdout)).toEqual({
      profile: 'default',
      session_id: creds?.session_id,
      user: { id: expect.any(String), name: 'Test Person', email, language: 'en' },
    });
    expect(second.stdout).not.toContain(creds!.refresh_token!);
    expect(second.stdout).not.toContain(creds!.token!);
    expect(statSync(credentialsFile(home)).mode & 0o777).toBe(0o600);
  });

  it('takes the password from --password too, with a warning', async () => {
    const { email } = await account('flag');
    const home = tempHome();
    const r = await svcctl(home, ['login', '--non-interactive', '--email', email, '--password', PASSWORD]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'code_sent' });
    expect(r.stderr).toContain('warning: --password shows the password to other users of this machine');
  });

  it.each([
    ['no email', ['--password-stdin'], /--non-interactive needs --email/],
    ['no password', ['--email', 'a@example.test'], /--non-interactive needs --password or --password-stdin/],
    ['an empty stdin', ['--email', 'a@example.test', '--password-stdin'], /stdin ended before a line/],
    [
      'a code without its challenge',
      ['--email', 'a@example.test', '--code', '123456'],
      /--code needs --challenge-id/,
    ],
    [
      'a challenge without its code',
      ['--challenge-id', 'c'],
      /--non-interactive --challenge-id needs --code/,
    ],
    ['a malformed code', ['--challenge-id', 'c', '--code', '12ab56'], /--code must be the 6 digits/],
    [
      'a password twice',
      ['--email', 'a@example.test', '--password', 'x', '--password-stdin'],
      /give --password or --password-stdin, not both/,
    ],
  ])('refuses %s (exit 2, nothing sent)', async (_name, args, message) => {
    const r = await svcctl(tempHome(), ['login', '--non-interactive', ...args]);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(ExitCode.usage);
    expect(r.stdout).toBe('');
  });

  it('exits 4 with invalid-credentials for a wrong password, and saves nothing', async () => {
    const { email } = await account('wrong');
    const home = tempHome();
    const r = await svcctl(home, ['login', '--non-interactive', '--email', email, '--password-stdin'], {
      input: 'not the password\n',
    });
    expect(r.code).toBe(ExitCode.auth);
    expect(r.stderr).toMatch(/^ {2}code: +invalid-credentials$/m);
    expect(r.stdout).toBe('');
    expect(await saved(home)).toBeUndefined();
  });

  it('exits 4 for a wrong code', async () => {
    const { email } = await account('wrong-code');
    const home = tempHome();
    const seen = smtp.messages.length;
    const first = await svcctl(home, ['login', '--non-interactive', '--email', email, '--password-stdin'], {
      input: `${PASSWORD}\n`,
    });
    const { challenge_id } = JSON.parse(first.stdout) as { challenge_id: string };
    const code = await loginCode(email, seen);
    const wrong = code === '000000' ? '000001' : '000000';
    const r = await svcctl(home, [
      'login',
      '--non-interactive',
      '--challenge-id',
      challenge_id,
      '--code',
      wrong,
    ]);
    expect(r.code).toBe(ExitCode.auth);
    expect(r.stderr).toMatch(/^ {2}code: +invalid-credentials$/m);
    expect(await saved(home)).toBeUndefined();
  });

  it('exits 9 when sign-ins to the address are rate-limited', async () => {
    const { email } = await account('limited');
    const sdk = createClient({ baseUrl: app.baseUrl, retries: 0 });
    // The per-address budget is 10 attempts in 15 minutes, right or wrong.
    for (let i = 0; i < 10; i += 1) {
      await sdk.authLogin({ body: { email, password: 'wrong password' } }).catch((e: unknown) => {
        if (!isSvcApiError(e, 'invalid-credentials')) throw e;
      });
    }
    const r = await svcctl(tempHome(), ['login', '--non-interactive', '--email', email, '--password-stdin'], {
      input: `${PASSWORD}\n`,
    });
    expect(r.code).toBe(ExitCode.rateLimited);
    expect(r.stderr).toMatch(/\(HTTP 429\)/);
    expect(r.stderr).toMatch(/^ {2}retry after: +\d+s$/m);
  });

  it('sends --captcha-token as X-Captcha-Token', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const stub: Server = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ challenge_id: '5b0c3f4e-8d2a-4c1b-9e7f-0a1b2c3d4e5f', status: 'code_sent' }));
    });
    stub.listen(0, '127.0.0.1');
    await once(stub, 'listening');
    try {
      const url = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
      const r = await runCli(
        [
          'login',
          '--non-interactive',
          '--email',
          'a@example.test',
          '--password-stdin',
          '--captcha-token',
          'solved',
        ],
        { input: 'pw\n', env: { SVCCTL_BASE_URL: url } },
      );
      expect(r.code).toBe(0);
      expect(seen[0]?.['x-captcha-token']).toBe('solved');
    } finally {
      await new Promise((r) => stub.close(r));
    }
  });
});

describe('the saved session', () => {
  it('is refreshed when the access token runs out, and the rotated pair saved (generated commands and api too)', async () => {
    const { email } = await account('refresh');
    const home = tempHome();
    const first = await cliLogin(home, email);

    const before = await svcctl(home, ['session']);
    expect(before.code).toBe(0);
    expect(sessionOf(before.stdout).session_id).toBe(first.session_id);
    // A valid access token is used as it is: nothing rotates.
    expect(await saved(home)).toEqual(first);

    app.clock.advance(16 * MINUTE); // past the access token's 15 minutes
    const after = await svcctl(home, ['session']);
    expect(after.stderr).toBe('');
    expect(after.code).toBe(0);
    expect(sessionOf(after.stdout).session_id).toBe(first.session_id);
    const second = (await saved(home))!;
    expect(second.session_id).toBe(first.session_id);
    expect(second.refresh_token).toMatch(/^svc_rt_/);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.token).not.toBe(first.token);
    expect(statSync(credentialsFile(home)).mode & 0o777).toBe(0o600);

    // A generated command refreshes the same way.
    app.clock.advance(16 * MINUTE);
    const list = await svcctl(home, ['me', 'sessions', 'list']);
    expect(list.code).toBe(0);
    const third = (await saved(home))!;
    expect(third.refresh_token).not.toBe(second.refresh_token);
    expect(third.session_id).toBe(first.session_id);

    // So does svcctl api, whose requests go out as they are.
    app.clock.advance(16 * MINUTE);
    const api = await svcctl(home, ['api', 'GET', '/auth/session']);
    expect(api.stderr).toBe('');
    expect(api.code).toBe(0);
    expect(sessionOf(api.stdout).session_id).toBe(first.session_id);
    expect((await saved(home))!.refresh_token).not.toBe(third.refresh_token);
  });

  it('refreshes with the newest pair in the file when another svcctl rotated it meanwhile', async () => {
    const { email } = await account('race');
    const home = tempHome();
    const first = await cliLogin(home, email);
    // This svcctl has read the pair from the file once it asks for a password.
    const slow = converse(['password', 'change', '--keep-this-session'], {
      terminal: false,
      env: { ...home, SVCCTL_BASE_URL: app.baseUrl },
    });
    await slow.waitFor('Current password: ');
    // Meanwhile another one refreshes the pair and saves the successor...
    const rotated = await createClient({ baseUrl: app.baseUrl, retries: 0 }).authRefresh({
      body: { refresh_token: first.refresh_token },
    });
    await writeCredentials(
      'default',
      { token: rotated.token, refresh_token: rotated.refresh_token, session_id: rotated.session_id },
      home.SVCCTL_CONFIG_DIR,
    );
    // ...and time passes: both access tokens run out, and the spent refresh token's grace is over.
    app.clock.advance(16 * MINUTE);
    slow.type(`${PASSWORD}\nthe next battery staple\n`);
    slow.end();
    expect(await slow.exit).toBe(0);
    expect(slow.stderr()).toContain('this one stays signed in');
    // Had it presented the refresh token it read first, the server would have ended the session.
    const now = (await saved(home))!;
    expect(now.session_id).toBe(first.session_id);
    expect(now.refresh_token).not.toBe(first.refresh_token);
    expect(now.refresh_token).not.toBe(rotated.refresh_token);
    expect((await svcctl(home, ['session'])).code).toBe(0);
  });

  it('is removed when the server ends it, with a note to sign in again (exit 4)', async () => {
    const { email } = await account('ended');
    const home = tempHome();
    const creds = await cliLogin(home, email);
    await revokeSession(app.sql, creds.session_id, 'test', app.clock.now());
    const r = await svcctl(home, ['session']);
    expect(r.code).toBe(ExitCode.auth);
    expect(r.stderr).toContain('the session of profile "default" has ended');
    expect(r.stderr).toMatch(/^ {2}code: +unauthenticated$/m);
    expect(await saved(home)).toBeUndefined();
    const again = await svcctl(home, ['session']);
    expect(again.code).toBe(ExitCode.auth);
    expect(again.stderr).toContain(`not signed in (profile "default"): run 'svcctl login'`);
  });

  it('names a profile other than the default in the hint: svcctl login --profile bob', async () => {
    const { email } = await account('ended-bob');
    const home = tempHome();
    const creds = await cliLogin(home, email);
    await writeCredentials('bob', creds, home.SVCCTL_CONFIG_DIR);
    await writeCredentials('default', null, home.SVCCTL_CONFIG_DIR);
    await revokeSession(app.sql, creds.session_id, 'test', app.clock.now());
    const r = await svcctl(home, ['--profile', 'bob', 'session']);
    expect(r.code).toBe(ExitCode.auth);
    expect(r.stderr).toContain(
      'the session of profile "bob" has ended (signed out, expired, or the password was changed); its saved credentials were removed. Sign in again: svcctl login --profile bob\n',
    );
    expect(await saved(home, 'bob')).toBeUndefined();
    const again = await svcctl(home, ['session'], { env: { SVCCTL_PROFILE: 'bob' } });
    expect(again.code).toBe(ExitCode.auth);
    expect(again.stderr).toContain(`not signed in (profile "bob"): run 'svcctl login --profile bob'`);
  });

  it('gives way to --token and SVCCTL_TOKEN, which are never refreshed nor removed', async () => {
    const { email } = await account('token-wins');
    const home = tempHome();
    const creds = await cliLogin(home, email);
    const other = await logIn(app, smtp, email, PASSWORD);

    const byEnv = await svcctl(home, ['session'], { env: { SVCCTL_TOKEN: other.token } });
    expect(byEnv.code).toBe(0);
    expect(sessionOf(byEnv.stdout).session_id).toBe(other.session_id);

    const bogus = await svcctl(home, ['--token', 'svc_pat_bogus', 'session']);
    expect(bogus.code).toBe(ExitCode.auth);
    expect(bogus.stderr).not.toContain('has ended');
    expect(await saved(home)).toEqual(creds);

    // An expired access token given with --token stays expired: no refresh behind its back.
    app.clock.advance(16 * MINUTE);
    const expired = await svcctl(home, ['--token', other.token, 'session']);
    expect(expired.code).toBe(ExitCode.auth);
    expect(await saved(home)).toEqual(creds);
  });

  it('is replaced by a new sign-in, which ends the replaced session on the server', async () => {
    const { email } = await account('replace');
    const home = tempHome();
    const first = await cliLogin(home, email);
    const second = await cliLogin(home, email);
    expect(second.session_id).not.toBe(first.session_id);
    const [row] = await app.sql<{ revoked_reason: string | null }[]>`
      select revoked_reason from sessions where id = ${first.session_id}`;
    expect(row?.revoked_reason).toBe('logout');
    expect((await svcctl(home, ['session'])).code).toBe(0);
  });

  it('keeps the other keys and profiles of credentials.yaml', async () => {
    const { email } = await account('keys');
    const home = tempHome();
    await writeCredentials('ci', { token: 'svc_pat_ci' }, home.SVCCTL_CONFIG_DIR);
    await writeCredentials('default', { note: 'mine' }, home.SVCCTL_CONFIG_DIR);
    const creds = await cliLogin(home, email);
    expect(creds).toMatchObject({ note: 'mine' });
    expect(await saved(home, 'ci')).toEqual({ token: 'svc_pat_ci' });
    expect((await svcctl(home, ['logout'])).code).toBe(0);
    expect(await saved(home)).toEqual({ note: 'mine' });
    expect(await saved(home, 'ci')).toEqual({ token: 'svc_pat_ci' });
  });
});

describe('svcctl sessions', () => {
  it('lists the sessions, deletes another one, and forgets its own when deleted', async () => {
    const { email } = await account('sessions');
    const home = tempHome();
    const creds = await cliLogin(home, email);
    const other = await logIn(app, smtp, email, PASSWORD);

    const list = await svcctl(home, ['sessions', 'list']);
    expect(list.code).toBe(0);
    const rows = (JSON.parse(list.stdout) as { data: { id: string; current: boolean; user_agent: string }[] })
      .data;
    expect(rows.map((s) => s.id).sort()).toEqual([creds.session_id, other.session_id].sort());
    const mine = rows.find((s) => s.current)!;
    expect(mine.id).toBe(creds.session_id);
    expect(mine.user_agent).toMatch(/^svcctl\/\d+\.\d+\.\d+ svcplatform-sdk\//);

    const del = await svcctl(home, ['sessions', 'delete', other.session_id]);
    expect(del).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const otherClient = createClient({ baseUrl: app.baseUrl, token: other.token, retries: 0 });
    await expect(otherClient.authSessionGet()).rejects.toMatchObject({ status: 401 });
    const after = JSON.parse((await svcctl(home, ['sessions', 'list'])).stdout) as { data: { id: string }[] };
    expect(after.data.map((s) => s.id)).toEqual([creds.session_id]);

    const own = await svcctl(home, ['sessions', 'delete', creds.session_id]);
    expect(own.code).toBe(0);
    expect(own.stderr).toContain('That was the session of profile "default"');
    expect(await saved(home)).toBeUndefined();
  });

  it('shows the sessions as a table with -o table', async () => {
    const { email } = await account('sessions-table');
    const home = tempHome();
    await cliLogin(home, email);
    const r = await svcctl(home, ['sessions', 'list', '-o', 'table']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^ID\s+CREATED_AT\s+LAST_USED_AT\s+USER_AGENT\s+IP\s+CURRENT$/);
  });
});

describe('svcctl logout', () => {
  it('ends the session on the server and removes the saved credentials', async () => {
    const { email } = await account('logout');
    const home = tempHome();
    const creds = await cliLogin(home, email);
    const r = await svcctl(home, ['logout']);
    expect(r).toMatchObject({ code: 0, stdout: '' });
    expect(r.stderr).toBe('Signed out (profile "default").\n');
    expect(await saved(home)).toBeUndefined();

    const old = await svcctl(home, ['--token', creds.token, 'session']);
    expect(old.code).toBe(ExitCode.auth);
    expect(old.stderr).toMatch(/^ {2}code: +unauthenticated$/m);
    const refresh = createClient({ baseUrl: app.baseUrl, retries: 0 }).authRefresh({
      body: { refresh_token: creds.refresh_token },
    });
    await expect(refresh).rejects.toMatchObject({ status: 401 });
  });

  it('ends a session whose access token has run out (refreshing it first)', async () => {
    const { email } = await account('logout-late');
    const home = tempHome();
    const creds = await cliLogin(home, email);
    app.clock.advance(16 * MINUTE);
    expect((await svcctl(home, ['logout'])).code).toBe(0);
    expect(await saved(home)).toBeUndefined();
    const [row] = await app.sql<{ revoked_reason: string | null }[]>`
      select revoked_reason from sessions where id = ${creds.session_id}`;
    expect(row?.revoked_reason).toBe('logout');
  });

  it('succeeds when the server had ended the session already (401)', async () => {
    const { email } = await account('logout-ended');
    const home = tempHome();
    const creds = await cliLogin(home, email);
    await revokeSession(app.sql, creds.session_id, 'test', app.clock.now());
    const r = await svcctl(home, ['logout']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('Signed out (profile "default").\n');
    expect(await saved(home)).toBeUndefined();
  });

  it('removes the credentials even when the server cannot be reached, and says so (exit 8)', async () => {
    const { email } = await account('logout-offline');
    const home = tempHome();
    await cliLogin(home, email);
    const r = await svcctl(home, ['logout'], {
      env: { SVCCTL_BASE_URL: `http://127.0.0.1:${await closedPort()}` },
    });
    expect(r.code).toBe(ExitCode.network);
    expect(r.stderr).toContain('the server could not be told: the session stays valid there');
    expect(r.stderr).toContain('cannot reach the API');
    expect(await saved(home)).toBeUndefined();
  });

  it('has nothing to do when not signed in', async () => {
    const r = await svcctl(tempHome(), ['logout']);
    expect(r).toMatchObject({ code: 0, stderr: 'Not signed in (profile "default"); nothing to do.\n' });
  });
});

describe('svcctl password change', () => {
  it('with --keep-this-session keeps svcctl signed in and signs another session out', async () => {
    const { email } = await account('change-keep');
    const home = tempHome();
    await cliLogin(home, email);
    const other = await logIn(app, smtp, email, PASSWORD);
    const newPassword = 'a whole new battery staple';
    const r = await svcctl(
      home,
      [
        'password',
        'change',
        '--non-interactive',
        '--current-password-stdin',
        '--new-password-stdin',
        '--keep-this-session',
      ],
      { input: `${PASSWORD}\n${newPassword}\n` },
    );
    expect(r.stderr).toBe(
      'Password changed. Every other session was signed out; this one stays signed in.\n',
    );
    expect(r.code).toBe(0);
    expect((await svcctl(home, ['session'])).code).toBe(0);
    const otherClient = createClient({ baseUrl: app.baseUrl, token: other.token, retries: 0 });
    await expect(otherClient.authSessionGet()).rejects.toMatchObject({ status: 401 });
    // The new password signs in.
    await cliLogin(tempHome(), email, newPassword);
  });

  it('without it signs svcctl out too and removes the saved credentials', async () => {
    const { email } = await account('change-all');
    const home = tempHome();
    const creds = await cliLogin(home, email);
    const r = await svcctl(home, ['password', 'change', '--current-password-stdin', '--new-password-stdin'], {
      input: `${PASSWORD}\nanother new battery staple\n`,
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Every session was signed out, this one too');
    expect(await saved(home)).toBeUndefined();
    const old = await svcctl(home, ['--token', creds.token, 'session']);
    expect(old.code).toBe(ExitCode.auth);
  });

  it('refuses a wrong current password (exit 5) and stays signed in', async () => {
    const { email } = await account('change-wrong');
    const home = tempHome();
    const creds = await cliLogin(home, email);
    const r = await svcctl(home, ['password', 'change', '--current-password-stdin', '--new-password-stdin'], {
      input: 'not it\nanother new battery staple\n',
    });
    expect(r.code).toBe(ExitCode.invalid);
    expect(r.stderr).toMatch(/^ {4}- body \/current_password: is wrong$/m);
    expect(await saved(home)).toEqual(creds);
  });

  it('needs a sign-in', async () => {
    const r = await svcctl(tempHome(), ['password', 'change', '--non-interactive']);
    expect(r.code).toBe(ExitCode.auth);
    expect(r.stderr).toContain('not signed in');
  });
});

describe('svcctl signup, password forgot and reset', () => {
  it('signs up; the mailed link verifies through svcctl auth password verify; then login works', async () => {
    const email = uniqueEmail('signup');
    const home = tempHome();
    const seen = smtp.messages.length;
    const r = await svcctl(
      home,
      [
        'signup',
        '--non-interactive',
        '--email',
        email,
        '--password-stdin',
        '--name',
        'Cli Person',
        '--language',
        'de',
      ],
      { input: `${PASSWORD}\n` },
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`If ${email} has no account yet, a verification link is on its way`);
    const mail = await smtp.waitFor((m) => m.to.includes(email) && smtp.messages.indexOf(m) >= seen);
    // The whole link, as copied from the mail; the token alone works too (password reset below).
    const link = /https?:\/\/\S+\/auth\/verify-email\?token=\S+/.exec(mail.text)![0];
    const verify = await svcctl(home, ['auth', 'password', 'verify', '--token', link]);
    expect(verify.code).toBe(0);
    expect(JSON.parse(verify.stdout)).toEqual({ accepted: true });

    await cliLogin(home, email);
    const session = sessionOf((await svcctl(home, ['session'])).stdout) as unknown as {
      user: { name: string; language: string };
    };
    expect(session.user).toMatchObject({ name: 'Cli Person', language: 'de' });
  });

  it.skipIf(!hasScript)('signs up on a terminal: the password is asked twice and never shown', async () => {
    const email = uniqueEmail('signup-tty');
    const secret = 'typed unseen staple 42';
    const tty = converse(['signup', '--email', email], {
      terminal: true,
      env: { ...tempHome(), SVCCTL_BASE_URL: app.baseUrl },
    });
    await tty.waitFor('Password: ');
    tty.type(`${secret}\n`);
    await tty.waitFor('Repeat the password: ');
    tty.type(`${secret}\n`);
    expect(await tty.exit).toBe(0);
    expect(tty.output()).not.toContain(secret);
    expect(tty.output()).toContain('a verification link is on its way');

    const typo = converse(['signup', '--email', uniqueEmail('signup-typo')], {
      terminal: true,
      env: { ...tempHome(), SVCCTL_BASE_URL: app.baseUrl },
    });
    await typo.waitFor('Password: ');
    typo.type(`${secret}\n`);
    await typo.waitFor('Repeat the password: ');
    typo.type(`${secret}!\n`);
    expect(await typo.exit).toBe(ExitCode.usage);
    expect(typo.output()).toContain('the two passwords differ; nothing was changed');
  });

  it('sends a reset link with password forgot; password reset --token LINK sets the new password', async () => {
    const { email } = await account('reset');
    const home = tempHome();
    const creds = await cliLogin(home, email);
    const seen = smtp.messages.length;
    const forgot = await svcctl(home, ['password', 'forgot', '--email', email]);
    expect(forgot.code).toBe(0);
    expect(forgot.stderr).toContain(
      `If an account uses ${email}, a link to set a new password is on its way`,
    );
    const mail = await smtp.waitFor((m) => m.to.includes(email) && smtp.messages.indexOf(m) >= seen);
    const newPassword = 'reset battery staple horse';
    const link = /https?:\/\/\S+\/auth\/reset-password\?token=\S+/.exec(mail.text)![0];
    const reset = await svcctl(home, ['password', 'reset', '--token', link, '--password-stdin'], {
      input: `${newPassword}\n`,
    });
    expect(reset.stderr).toContain('Password set.');
    expect(reset.code).toBe(0);
    // Every session was signed out, the saved one too: the next command finds out and forgets it.
    expect((await svcctl(home, ['--token', creds.token, 'session'])).code).toBe(ExitCode.auth);
    await cliLogin(home, email, newPassword);

    const again = await svcctl(home, ['password', 'reset', '--token', tokenIn(mail), '--password-stdin'], {
      input: `${newPassword}\n`,
    });
    expect(again.code).toBe(ExitCode.invalid);
    expect(again.stderr).toMatch(/^ {2}code: +invalid-field-value$/m);
  });
});

describe('--help', () => {
  it('lists the sign-in commands', async () => {
    const r = await runCli(['--help']);
    expect(r.stdout).toMatch(/^Sign-in commands:$/m);
    for (const term of [
      'login [options]',
      'logout',
      'session',
      'sessions <command>',
      'password <command>',
      'signup [options]',
    ])
      expect(r.stdout).toMatch(new RegExp(`^ {2}${term.replace(/[[\]]/g, '\\$&')} `, 'm'));
  });

  it('explains each sign-in command', async () => {
    for (const words of [
      ['login'],
      ['logout'],
      ['session'],
      ['sessions', 'list'],
      ['sessions', 'delete'],
      ['password', 'change'],
      ['password', 'forgot'],
      ['password', 'reset'],
      ['signup'],
    ]) {
      const r = await runCli([...words, '--help']);
      expect(r.code, words.join(' ')).toBe(0);
      expect(r.stdout).toContain(`Usage: svcctl ${words.join(' ')}`);
    }
  });
});
