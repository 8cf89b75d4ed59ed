// Applications with svcctl against the real server: admin applications create and rotate-token by staff
// (elevated through svcctl, or with an admin-authorized API token), the application token alone on
// stdout and used as SVCCTL_TOKEN for the application reads and delegations mint; delegations grant,
// list and revoke by a user, checked by what the application may then do for that user (the SDK's
// acting-as client).
import { createClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { newAccount } from '../../../test/support/auth.js';
import { outcome } from '../../../test/support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { writeCredentials } from '../../src/credentials.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { runCli, tempHome, type CliRun } from '../support/run-cli.js';

let app: TestApp;
let smtp: TestSmtp;

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

type Home = ReturnType<typeof tempHome>;
interface Person {
  home: Home;
  userId: string;
  /** The session's access token, as an application would obtain it from the user. */
  token: string;
}

const svcctl = (home: Home, args: string[], run: CliRun = {}) =>
  runCli(args, { ...run, env: { ...home, SVCCTL_BASE_URL: app.baseUrl, ...run.env } });
/** svcctl with only a token (an application's, or an API token): a fresh home, nothing saved. */
const withToken = (token: string, args: string[]) =>
  runCli(args, { env: { SVCCTL_BASE_URL: app.baseUrl, SVCCTL_TOKEN: token } });

/** A new account whose session is saved for the profile, as `svcctl login` saves it. */
async function signedIn(tag: string, permissions: string[] = []): Promise<Person> {
  const { session } = await newAccount(app, smtp, tag);
  if (permissions.length > 0) {
    await app.sql`update users set system_permissions = ${permissions}::text[] where id = ${session.user.id}`;
  }
  const home = tempHome();
  await writeCredentials(
    'default',
    { token: session.token, refresh_token: session.refresh_token, session_id: session.session_id },
    home.SVCCTL_CONFIG_DIR,
  );
  return { home, userId: session.user.id, token: session.token };
}

/** Staff whose saved session svcctl elevated (`sudo setup` saves the elevated token for the profile). */
async function elevatedStaff(tag: string, permissions = ['manage_applications']): Promise<Person> {
  const staff = await signedIn(tag, permissions);
  const r = await svcctl(staff.home, ['sudo', 'setup', '--non-interactive', '--pin-stdin'], {
    input: '246810\n',
  });
  expect(r.code, r.stderr).toBe(0);
  return staff;
}

const APP_TOKEN = /^svc_app_([0-9a-f-]{36})_[0-9A-Za-z]+\n$/;
const json = <T>(stdout: string) => JSON.parse(stdout) as T;
const unique = (prefix: string) => `${prefix} ${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

/** `admin applications create` that must succeed: the application's id and token. */
async function register(
  staff: Person,
  name: string,
  capabilities: string[],
): Promise<{ id: string; token: string }> {
  const r = await svcctl(staff.home, [
    'admin',
    'applications',
    'create',
    '--name',
    name,
    ...capabilities.flatMap((c) => ['--capability', c]),
  ]);
  expect(r.code, r.stderr).toBe(0);
  const [, id] = APP_TOKEN.exec(r.stdout)!;
  return { id: id!, token: r.stdout.trimEnd() };
}

const applicationsNamed = async (name: string) =>
  (await app.sql<{ n: number }[]>`select count(*)::int as n from applications where name = ${name}`)[0]!.n;

describe('svcctl admin applications', () => {
  it('create prints the token alone on stdout; it works as SVCCTL_TOKEN for the reads it holds', async () => {
    const staff = await elevatedStaff('app-create');
    const name = unique('Forum');
    const r = await svcctl(staff.home, [
      'admin',
      'applications',
      'create',
      '--name',
      name,
      '--capability',
      'users.read.public',
    ]);
    expect(r.code).toBe(0);
    const [, id] = APP_TOKEN.exec(r.stdout)!;
    const token = r.stdout.trimEnd();
    expect(r.stderr).toBe(
      `Registered application "${name}" (id ${id}; capabilities users.read.public).\nIts token, on stdout, is shown this once; a new one: svcctl admin applications rotate-token ${id}\n`,
    );
    const [row] = await app.sql<{ name: string; capabilities: string[] }[]>`
      select name, capabilities from applications where id = ${id!}`;
    expect(row).toEqual({ name, capabilities: ['users.read.public'] });

    const user = await signedIn('app-create-user');
    const show = await withToken(token, ['applications', 'users', 'show', user.userId]);
    expect(show.stderr).toBe('');
    expect(json(show.stdout)).toEqual({
      id: user.userId,
      name: 'Test Person',
      avatar_asset_id: null,
      deleted_at: null,
    });
    const lookup = await withToken(token, [
      'applications',
      'users',
      'lookup',
      '--ids',
      user.userId,
      '--ids',
      staff.userId,
    ]);
    expect(json<{ users: { id: string }[] }>(lookup.stdout).users.map((u) => u.id)).toEqual([
      user.userId,
      staff.userId,
    ]);

    // What it was not given is refused, saying what is missing.
    const oauth = await withToken(token, [
      'applications',
      'users',
      'by-oauth-account',
      '--provider',
      'github',
      '--provider-user-id',
      '42',
    ]);
    expect(oauth.code).toBe(ExitCode.auth);
    expect(oauth.stderr).toContain('This application lacks the users.lookup.oauth capability.');
  });

  it('-o json prints the whole answer; rotate-token prints the new token, and the old one is refused at once', async () => {
    const staff = await elevatedStaff('app-rotate');
    const name = unique('Bot');
    const created = await svcctl(staff.home, [
      'admin',
      'applications',
      'create',
      '-o',
      'json',
      '--name',
      name,
    ]);
    expect(created.stderr).toBe('');
    const answer = json<{ application: { id: string; name: string; capabilities: string[] }; token: string }>(
      created.stdout,
    );
    expect(answer.application).toMatchObject({ name, capabilities: [] });
    expect(`${answer.token}\n`).toMatch(APP_TOKEN);
    const { id } = answer.application;
    const user = await signedIn('app-rotate-user');
    const mint = [
      'applications',
      'delegations',
      'mint',
      '--capabilities',
      'me.read',
      '--session-token',
      user.token,
    ];
    expect((await withToken(answer.token, mint)).code).toBe(0);

    const r = await svcctl(staff.home, ['admin', 'applications', 'rotate-token', id]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(APP_TOKEN);
    const fresh = r.stdout.trimEnd();
    expect(fresh).not.toBe(answer.token);
    expect(r.stderr).toBe(
      `New token of application ${id}, on stdout, shown this once; the previous token stopped working.\n`,
    );
    const old = await withToken(answer.token, mint);
    expect(old.code).toBe(ExitCode.auth);
    expect(old.stderr).toMatch(/^ {2}code: +unauthenticated$/m);
    expect((await withToken(fresh, mint)).code).toBe(0);

    const again = await svcctl(staff.home, ['admin', 'applications', 'rotate-token', id, '-o', 'yaml']);
    expect(again.stdout).toMatch(/^token: svc_app_\S+\n$/);
    expect((await withToken(fresh, mint)).code).toBe(ExitCode.auth);
  });

  it('refuses staff not elevated (elevation-required, with the hint) and without manage_applications; nothing is registered', async () => {
    const plain = await signedIn('app-plain', ['manage_applications']);
    const name = unique('Refused');
    const r = await svcctl(plain.home, ['admin', 'applications', 'create', '--name', name]);
    expect(r.code).toBe(ExitCode.auth);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^ {2}code: +elevation-required$/m);
    expect(r.stderr).toContain('svcctl sudo elevate');

    const other = await elevatedStaff('app-other', ['manage_users']);
    const forbidden = await svcctl(other.home, ['admin', 'applications', 'create', '--name', name]);
    expect(forbidden.code).toBe(ExitCode.auth);
    expect(forbidden.stderr).toMatch(/^ {2}code: +forbidden$/m);
    expect(await applicationsNamed(name)).toBe(0);

    const staff = await elevatedStaff('app-unknown');
    const unknown = await svcctl(staff.home, [
      'admin',
      'applications',
      'rotate-token',
      '00000000-0000-4000-8000-000000000000',
    ]);
    expect(unknown.code).toBe(ExitCode.notFound);
    expect(unknown.stdout).toBe('');
  });

  it('an admin-authorized API token of the staff member registers applications without elevation', async () => {
    const staff = await elevatedStaff('app-token');
    const grant = ['tokens', 'create', '--name', 'ops', '--grant', 'admin.applications.manage'];
    // Staff power in a token is deliberate: without --admin-authorized it is refused, and none is minted.
    const refused = await svcctl(staff.home, grant);
    expect(refused.code).toBe(ExitCode.auth);
    expect(refused.stderr).toContain('needs admin_authorized: true and an elevated session');
    expect((await app.sql`select id from api_tokens where user_id = ${staff.userId}`).length).toBe(0);

    const minted = await svcctl(staff.home, [...grant, '--admin-authorized']);
    expect(minted.code, minted.stderr).toBe(0);
    expect(minted.stderr).toContain('; admin-authorized; never expires)');
    const name = unique('Via token');
    const r = await withToken(minted.stdout.trimEnd(), ['admin', 'applications', 'create', '--name', name]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(APP_TOKEN);
    expect(await applicationsNamed(name)).toBe(1);
  });
});

describe('svcctl delegations', () => {
  it('grant prints the delegation; the application acts for the user; list shows it; revoke ends it', async () => {
    const staff = await elevatedStaff('dlg-staff');
    const application = await register(staff, unique('Helper'), []);
    const user = await signedIn('dlg-user');
    const asUser = createClient({ baseUrl: app.baseUrl, token: application.token, retries: 0 }).actingAs(
      user.userId,
    );
    expect(await outcome(asUser.meGet())).toEqual([403, 'forbidden']);

    const r = await svcctl(user.home, [
      'delegations',
      'grant',
      '--application-id',
      application.id,
      '--capability',
      'me.read',
      '--capability',
      'projects.read',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const delegation = json<{ id: string; status: string }>(r.stdout);
    expect(delegation).toMatchObject({
      application: { id: application.id },
      capabilities: ['me.read', 'projects.read'],
      status: 'live',
      revoked_at: null,
    });
    expect((await asUser.meGet()).id).toBe(user.userId);
    // Only what was delegated: me.manage was not.
    expect(await outcome(asUser.meUpdate({ body: { name: 'By The App' } }))).toEqual([403, 'forbidden']);

    const table = await svcctl(user.home, ['delegations', 'list', '-o', 'table']);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +APPLICATION +CAPABILITIES +STATUS +LAST_USED_AT$/);
    expect(lines[1]!.split(/ {2,}/)).toEqual([
      delegation.id,
      expect.stringMatching(/^Helper /),
      'me.read, projects.read',
      'live',
      expect.stringMatching(/^\d{4}-/),
    ]);
    expect(lines).toHaveLength(2);

    const revoke = await svcctl(user.home, ['delegations', 'revoke', delegation.id]);
    expect(revoke).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await outcome(asUser.meGet())).toEqual([403, 'forbidden']);
    const [listed] = json<{ id: string; status: string }[]>(
      (await svcctl(user.home, ['delegations', 'list'])).stdout,
    );
    expect(listed).toMatchObject({ id: delegation.id, status: 'revoked' });
    expect((await svcctl(user.home, ['delegations', 'revoke', delegation.id])).code).toBe(ExitCode.notFound);

    // Granting again revives it, with the new capabilities.
    const again = await svcctl(user.home, [
      'delegations',
      'grant',
      '--application-id',
      application.id,
      '--capability',
      'me.read',
    ]);
    expect(json(again.stdout)).toMatchObject({
      id: delegation.id,
      capabilities: ['me.read'],
      status: 'live',
    });
  });

  it('the application mints a delegation from a session token the user gave it (SVCCTL_TOKEN)', async () => {
    const staff = await elevatedStaff('dlg-mint-staff');
    const application = await register(staff, unique('Minter'), []);
    const user = await signedIn('dlg-mint-user');
    const r = await withToken(application.token, [
      'applications',
      'delegations',
      'mint',
      '--capabilities',
      'me.read',
      '--session-token',
      user.token,
    ]);
    expect(r.stderr).toBe('');
    const minted = json<{ id: string; user_id: string }>(r.stdout);
    expect(minted.user_id).toBe(user.userId);
    const [listed] = json<{ id: string; application: { id: string } }[]>(
      (await svcctl(user.home, ['delegations', 'list'])).stdout,
    );
    expect(listed).toMatchObject({ id: minted.id, application: { id: application.id } });

    const bad = await withToken(application.token, [
      'applications',
      'delegations',
      'mint',
      '--capabilities',
      'me.read',
      '--session-token',
      'not-a-session',
    ]);
    expect(bad.code).toBe(ExitCode.auth);
    expect(bad.stderr).toMatch(/^ {2}code: +invalid-credentials$/m);
  });

  it.each([
    [
      'an admin-only capability, pointing at it',
      (id: string) => [
        '--application-id',
        id,
        '--capability',
        'me.read',
        '--capability',
        'users.read.public',
      ],
      ExitCode.invalid,
      'body /capabilities/1',
    ],
    [
      'an unknown application',
      () => ['--application-id', '00000000-0000-4000-8000-000000000000', '--capability', 'me.read'],
      ExitCode.notFound,
      /^ {2}code: +not-found$/m,
    ],
    [
      'no --capability',
      (id: string) => ['--application-id', id],
      ExitCode.usage,
      "required option '--capability <name>'",
    ],
  ])('grant refuses %s; nothing is delegated', async (_name, args, exit, message) => {
    const staff = await elevatedStaff('dlg-refused-staff');
    const application = await register(staff, unique('Refused'), []);
    const user = await signedIn('dlg-refused');
    const r = await svcctl(user.home, ['delegations', 'grant', ...args(application.id)]);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(exit);
    expect(r.stdout).toBe('');
    expect(json((await svcctl(user.home, ['delegations', 'list'])).stdout)).toEqual([]);
  });
});
