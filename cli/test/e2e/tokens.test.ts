// Personal API tokens with svcctl against the real server: tokens create (the secret alone on stdout,
// the note on stderr, the whole answer with -o json or yaml, --save-as), the token used as
// SVCCTL_TOKEN or --token for what it grants and refused for the rest, tokens list as a table and as
// JSON, tokens revoke, tokens capabilities, and what is refused before and by the server.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { newAccount } from '../../../test/support/auth.js';
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

const svcctl = (home: Home, args: string[], run: CliRun = {}) =>
  runCli(args, { ...run, env: { ...home, SVCCTL_BASE_URL: app.baseUrl, ...run.env } });
/** svcctl with only an API token: a fresh home, nothing saved. */
const withToken = (token: string, args: string[]) =>
  runCli(args, { env: { SVCCTL_BASE_URL: app.baseUrl, SVCCTL_TOKEN: token } });

/** A new account whose session is saved for the profile, as `svcctl login` saves it. */
async function signedIn(tag: string): Promise<{ home: Home; userId: string }> {
  const { session } = await newAccount(app, smtp, tag);
  const home = tempHome();
  await writeCredentials(
    'default',
    { token: session.token, refresh_token: session.refresh_token, session_id: session.session_id },
    home.SVCCTL_CONFIG_DIR,
  );
  return { home, userId: session.user.id };
}

interface ApiToken {
  id: string;
  name: string;
  capabilities: string[];
  authorization: { grants: { capability: string; scope: { kind: string; id?: string } }[] } | null;
  admin_authorized: boolean;
  expires_at: string | null;
  last_used_at: string | null;
}

const SECRET = /^svc_pat_([0-9a-f-]{36})_[0-9A-Za-z]{43}\n$/;
const json = <T>(stdout: string) => JSON.parse(stdout) as T;
const file = (home: Home, name: string) =>
  readFile(join(home.SVCCTL_CONFIG_DIR, name), 'utf8').catch(() => '');

/** `tokens create` that must succeed: the secret it printed (stdout is nothing else). */
async function mint(home: Home, args: string[]): Promise<string> {
  const r = await svcctl(home, ['tokens', 'create', ...args]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(SECRET);
  return r.stdout.trimEnd();
}

async function tokens(home: Home): Promise<ApiToken[]> {
  const r = await svcctl(home, ['tokens', 'list', '-o', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return json<ApiToken[]>(r.stdout);
}

const tokenCount = async (userId: string) =>
  (await app.sql<{ n: number }[]>`select count(*)::int as n from api_tokens where user_id = ${userId}`)[0]!.n;

describe('svcctl tokens create', () => {
  it('prints the secret alone on stdout, the note on stderr, and saves nothing', async () => {
    const { home, userId } = await signedIn('pat-create');
    const credentials = await file(home, 'credentials.yaml');
    // Through a pipe, as `TOKEN=$(svcctl tokens create ...)` runs it: no JSON, the secret and a newline.
    const r = await svcctl(home, ['tokens', 'create', '--name', ' ci ', '--grant', 'me.read']);
    expect(r.code).toBe(0);
    const [, id] = SECRET.exec(r.stdout)!;
    const secret = r.stdout.trimEnd();
    expect(r.stderr).not.toContain(secret.slice(8 + 36 + 1));
    expect(r.stderr).toBe(
      `Created API token "ci" (id ${id}; grants me.read; never expires).\nIts secret, on stdout, is shown this once; revoke it with: svcctl tokens revoke ${id}\n`,
    );
    expect(await file(home, 'credentials.yaml')).toBe(credentials);
    expect(await file(home, 'config.yaml')).toBe('');
    const [row] = await app.sql<{ user_id: string; name: string }[]>`
      select user_id, name from api_tokens where id = ${id!}`;
    expect(row).toEqual({ user_id: userId, name: 'ci' });

    // --quiet leaves out the note, never the secret: it cannot be shown again.
    const quiet = await svcctl(home, ['tokens', 'create', '-q', '--name', 'quiet', '--grant', 'me.read']);
    expect(quiet).toMatchObject({ code: 0, stderr: '' });
    expect(quiet.stdout).toMatch(SECRET);
  });

  it('the secret works as SVCCTL_TOKEN and --token for what it grants; the rest is refused (exit 4)', async () => {
    const { home, userId } = await signedIn('pat-use');
    const secret = await mint(home, ['--name', 'reader', '--grant', 'me.read']);

    const me = await withToken(secret, ['me', 'show']);
    expect(me.stderr).toBe('');
    expect(me.code).toBe(0);
    expect(json<{ id: string; system_permissions: string[] }>(me.stdout)).toMatchObject({
      id: userId,
      system_permissions: [],
    });
    const flag = await runCli(['--token', secret, 'me', 'show', '-o', 'yaml'], {
      env: { SVCCTL_BASE_URL: app.baseUrl },
    });
    expect(flag.code).toBe(0);
    expect(parseYaml(flag.stdout)).toMatchObject({ id: userId });

    // Without me.read, me show still answers (GET /me needs no capability, DECISIONS.md §7).
    const assets = await mint(home, ['--name', 'assets', '--grant', 'assets.read']);
    const noRead = await withToken(assets, ['me', 'show']);
    expect(noRead.stderr).toBe('');
    expect(noRead.code).toBe(0);
    expect(json<{ id: string }>(noRead.stdout)).toMatchObject({ id: userId });

    // whoami answers any token, whatever it was granted (GET /me, DECISIONS.md §7).
    const who = await withToken(assets, ['whoami']);
    expect(who.stderr).toBe('');
    expect(who.code).toBe(0);
    expect(json<{ id: string; system_permissions: string[] }>(who.stdout)).toMatchObject({
      id: userId,
      system_permissions: [],
    });

    const orgs = await withToken(secret, ['orgs', 'list']);
    expect(orgs.code).toBe(ExitCode.auth);
    expect(orgs.stdout).toBe('');
    expect(orgs.stderr).toContain('This API token lacks the organizations.read capability.');
    expect(orgs.stderr).toMatch(/^ {2}code: +forbidden$/m);

    // A token changes nothing it was not granted: me update needs me.manage.
    const update = await withToken(secret, ['me', 'update', '--name', 'Changed By Token']);
    expect(update.code).toBe(ExitCode.auth);
    expect(update.stderr).toContain('lacks the me.manage capability');
    const [row] = await app.sql<{ name: string }[]>`select name from users where id = ${userId}`;
    expect(row!.name).toBe('Test Person');

    // Only a session mints: a token may not make another (403, exit 4), and none is made.
    const before = await tokenCount(userId);
    const again = await withToken(secret, ['tokens', 'create', '--name', 'child', '--grant', 'me.read']);
    expect(again.code).toBe(ExitCode.auth);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain('API tokens may not call this operation');
    expect(await tokenCount(userId)).toBe(before);
  });

  it('-o json prints the whole answer, scoped grants as given; SVCCTL_OUTPUT=yaml likewise', async () => {
    const { home } = await signedIn('pat-json');
    const [org] = json<{ id: string }[]>((await svcctl(home, ['orgs', 'list'])).stdout);
    const r = await svcctl(home, [
      'tokens',
      'create',
      '-o',
      'json',
      '--name',
      'scoped',
      '--grant',
      `projects.read:organization=${org!.id}`,
      '--grant',
      'user_api_tokens.list:all',
      '--expires-at',
      '2099-01-01T00:00:00Z',
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const answer = json<{ secret: string; token: ApiToken }>(r.stdout);
    expect(`${answer.secret}\n`).toMatch(SECRET);
    expect(answer.token).toMatchObject({
      name: 'scoped',
      capabilities: ['projects.read', 'user_api_tokens.list'],
      authorization: {
        grants: [
          { capability: 'projects.read', scope: { kind: 'organization', id: org!.id } },
          { capability: 'user_api_tokens.list', scope: { kind: 'all' } },
        ],
      },
      admin_authorized: false,
      expires_at: '2099-01-01T00:00:00.000Z',
    });
    // The scoped token lists its owner's tokens (user_api_tokens.list) from a fresh home.
    const listed = await withToken(answer.secret, ['tokens', 'list']);
    expect(listed.code).toBe(0);
    expect(json<ApiToken[]>(listed.stdout).map((t) => t.id)).toEqual([answer.token.id]);

    const yaml = await svcctl(home, ['tokens', 'create', '--name', 'y', '--grant', 'me.read'], {
      env: { SVCCTL_OUTPUT: 'yaml' },
    });
    expect(yaml.code).toBe(0);
    expect(parseYaml(yaml.stdout)).toMatchObject({
      secret: expect.stringMatching(/^svc_pat_/),
      token: { name: 'y' },
    });
  });

  it('--save-as saves the token for a new profile (with this server) instead of printing it', async () => {
    const { home, userId } = await signedIn('pat-save');
    const r = await svcctl(home, [
      'tokens',
      'create',
      '--name',
      'saved',
      '--grant',
      'me.read',
      '--save-as',
      'ci',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Saved as the token of profile "ci"');
    const saved = parseYaml(await file(home, 'credentials.yaml')) as {
      profiles: Record<string, { token: string; refresh_token?: string }>;
    };
    expect(saved.profiles.ci).toEqual({ token: expect.stringMatching(/^svc_pat_/) });
    expect(r.stderr).not.toContain(saved.profiles.ci!.token);
    expect(saved.profiles.default!.refresh_token).toEqual(expect.any(String));
    expect(parseYaml(await file(home, 'config.yaml'))).toEqual({
      profiles: { ci: { base_url: app.baseUrl } },
    });

    // Without SVCCTL_BASE_URL: the profile knows its server and sends the saved token.
    const me = await runCli(['--profile', 'ci', 'me', 'show'], { env: { ...home } });
    expect(me.code, me.stderr).toBe(0);
    expect(json<{ id: string }>(me.stdout).id).toBe(userId);

    // A profile holding credentials is never overwritten: refused before anything is minted.
    const before = await tokenCount(userId);
    for (const profile of ['ci', 'default']) {
      const taken = await svcctl(home, [
        'tokens',
        'create',
        '--name',
        'x',
        '--grant',
        'me.read',
        '--save-as',
        profile,
      ]);
      expect(taken.code).toBe(ExitCode.usage);
      expect(taken.stderr).toContain(`profile "${profile}" holds credentials already`);
    }
    expect(await tokenCount(userId)).toBe(before);
  });

  it.each([
    ['no --grant', ['--name', 'x'], ExitCode.usage, "required option '--grant <grant>' not specified"],
    ['no --name', ['--grant', 'me.read'], ExitCode.usage, "required option '--name <name>' not specified"],
    [
      'a scope of no known kind',
      ['--name', 'x', '--grant', 'me.read:team=1'],
      ExitCode.usage,
      'is not all, organization=ID or project=ID',
    ],
    [
      'a scope id that is no uuid',
      ['--name', 'x', '--grant', 'projects.read:project=web'],
      ExitCode.usage,
      'a uuid',
    ],
    [
      'an unknown capability, pointing at its --grant',
      ['--name', 'x', '--grant', 'me.read', '--grant', 'no.such'],
      ExitCode.invalid,
      'body /authorization/grants/1/capability: Unknown capability "no.such"',
    ],
    [
      'a scope the capability does not take',
      ['--name', 'x', '--grant', `me.read:organization=${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`],
      ExitCode.invalid,
      'body /authorization/grants/0/scope/kind',
    ],
    [
      'an expiry in the past',
      ['--name', 'x', '--grant', 'me.read', '--expires-at', '2001-01-01T00:00:00Z'],
      ExitCode.invalid,
      'body /expires_at',
    ],
    ['an empty name', ['--name', '  ', '--grant', 'me.read'], ExitCode.invalid, 'body /name'],
    [
      'an admin-only capability of a user without staff power',
      ['--name', 'x', '--grant', 'users.read.public', '--admin-authorized'],
      ExitCode.auth,
      /^ {2}code: +forbidden$/m,
    ],
    [
      '--admin-authorized without an admin-only capability',
      ['--name', 'x', '--grant', 'me.read', '--admin-authorized'],
      ExitCode.invalid,
      'body /admin_authorized',
    ],
  ])('refuses %s and mints nothing', async (_name, args, exit, message) => {
    const { home, userId } = await signedIn('pat-refused');
    const r = await svcctl(home, ['tokens', 'create', ...args]);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(exit);
    expect(r.stdout).toBe('');
    expect(await tokenCount(userId)).toBe(0);
  });
});

describe('svcctl tokens list, revoke and capabilities', () => {
  it('a saved token that was revoked: exit 4 with a hint naming the profile, which the hint then fixes', async () => {
    const { home } = await signedIn('pat-saved-revoked');
    const r = await svcctl(home, ['tokens', 'create', '--name', 'ci', '--grant', 'me.read', '--save-as', 'ci']);
    expect(r.code, r.stderr).toBe(0);
    const saved = parseYaml(await file(home, 'credentials.yaml')) as { profiles: Record<string, { token: string }> };
    const [, id] = SECRET.exec(`${saved.profiles.ci!.token}\n`)!;
    expect((await svcctl(home, ['tokens', 'revoke', id!])).code).toBe(0);

    const refused = await runCli(['--profile', 'ci', 'me', 'show'], { env: { ...home } });
    expect(refused.code).toBe(ExitCode.auth);
    expect(refused.stderr).toContain('the API token saved for profile "ci" was refused');
    expect(refused.stderr).toContain('svcctl --profile ci logout');
    expect(refused.stderr).toContain('svcctl login --profile ci');
    expect(refused.stderr).toMatch(/^ {2}code: +unauthenticated$/m);
    // The hint's first step works: the dead token is removed, and the profile is free again.
    const out = await runCli(['--profile', 'ci', 'logout'], { env: { ...home } });
    expect(out.code, out.stderr).toBe(0);
    const after = parseYaml(await file(home, 'credentials.yaml')) as { profiles: Record<string, unknown> };
    expect(after.profiles.ci).toBeUndefined();
    // A token given on the command line is named as such.
    const given = await withToken(saved.profiles.ci!.token, ['me', 'show']);
    expect(given.stderr).toContain('the API token given with SVCCTL_TOKEN was refused');
  });

  it('list shows each token as a table row and as JSON; last_used_at once it is used', async () => {
    const { home } = await signedIn('pat-list');
    expect((await svcctl(home, ['tokens', 'list', '-o', 'table'])).stdout).toBe('(none)\n');
    const secret = await mint(home, ['--name', 'reader', '--grant', 'me.read', '--grant', 'assets.read']);
    await mint(home, ['--name', 'later', '--grant', 'me.read', '--expires-at', '2099-06-30T12:00:00Z']);
    const [first, second] = await tokens(home);
    expect([first!.name, second!.name].sort()).toEqual(['later', 'reader']);
    const reader = [first!, second!].find((t) => t.name === 'reader')!;
    const later = [first!, second!].find((t) => t.name === 'later')!;
    expect(reader).toMatchObject({
      capabilities: ['assets.read', 'me.read'],
      expires_at: null,
      last_used_at: null,
    });

    expect((await withToken(secret, ['me', 'show'])).code).toBe(0);
    const table = await svcctl(home, ['tokens', 'list', '-o', 'table']);
    expect(table.stderr).toBe('');
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +NAME +CAPABILITIES +EXPIRES_AT +LAST_USED_AT$/);
    const row = (id: string) => lines.find((l) => l.startsWith(id))!.split(/ {2,}/);
    expect(row(reader.id)).toEqual([
      reader.id,
      'reader',
      'assets.read, me.read',
      'never',
      expect.stringMatching(/^\d{4}-/),
    ]);
    expect(row(later.id)).toEqual([later.id, 'later', 'me.read', '2099-06-30T12:00:00.000Z', '-']);
    // The table never shows a secret.
    expect(table.stdout).not.toContain('svc_pat_');
  });

  it('list names a legacy token (no grants: every non-admin capability) unrestricted', async () => {
    const { home, userId } = await signedIn('pat-legacy');
    const id = randomUUID();
    // Tokens minted before grants existed; the API mints none any more, so the row is written here.
    await app.sql`
      insert into api_tokens (id, user_id, name, secret_digest, grants, created_at)
      values (${id}, ${userId}, 'old', ${Buffer.alloc(32)}, null, ${app.clock.now()})`;
    expect(await tokens(home)).toMatchObject([{ id, capabilities: [], authorization: null }]);
    const table = await svcctl(home, ['tokens', 'list', '-o', 'table']);
    expect(table.stdout.trimEnd().split('\n')[1]!.split(/ {2,}/)).toEqual([
      id,
      'old',
      '(unrestricted)',
      'never',
      '-',
    ]);
  });

  it('revoke removes the token: it leaves the list and stops working; again is 404 (exit 3)', async () => {
    const { home } = await signedIn('pat-revoke');
    const secret = await mint(home, ['--name', 'gone', '--grant', 'me.read']);
    const keep = await mint(home, ['--name', 'kept', '--grant', 'me.read']);
    const [, id] = SECRET.exec(`${secret}\n`)!;

    const r = await svcctl(home, ['tokens', 'revoke', id!]);
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect((await tokens(home)).map((t) => t.name)).toEqual(['kept']);
    const refused = await withToken(secret, ['me', 'show']);
    expect(refused.code).toBe(ExitCode.auth);
    expect(refused.stderr).toMatch(/^ {2}code: +unauthenticated$/m);
    expect((await withToken(keep, ['me', 'show'])).code).toBe(0);

    const again = await svcctl(home, ['tokens', 'revoke', id!]);
    expect(again.code).toBe(ExitCode.notFound);
    expect(again.stderr).toMatch(/^ {2}code: +not-found$/m);

    // Another account's token is theirs to revoke: 404, and it keeps working.
    const other = await signedIn('pat-revoke-other');
    const [, keptId] = SECRET.exec(`${keep}\n`)!;
    expect((await svcctl(other.home, ['tokens', 'revoke', keptId!])).code).toBe(ExitCode.notFound);
    expect((await withToken(keep, ['me', 'show'])).code).toBe(0);
  });

  it('capabilities lists the catalogue: name, admin_only, scopes and description', async () => {
    const { home } = await signedIn('pat-capabilities');
    const r = await svcctl(home, ['tokens', 'capabilities']);
    expect(r.code).toBe(0);
    const catalogue = json<{ name: string; admin_only: boolean; scopes: string[]; description: string }[]>(
      r.stdout,
    );
    expect(catalogue).toContainEqual({
      name: 'projects.read',
      admin_only: false,
      scopes: ['all', 'organization', 'project'],
      description: expect.any(String),
    });
    // What this caller may grant: no staff power without a system permission.
    expect(catalogue.filter((c) => c.admin_only)).toEqual([]);
    const staff = await signedIn('pat-capabilities-staff');
    await app.sql`update users set system_permissions = ${['manage_applications']}::text[] where id = ${staff.userId}`;
    const staffCatalogue = json<typeof catalogue>(
      (await svcctl(staff.home, ['tokens', 'capabilities'])).stdout,
    );
    expect(staffCatalogue.find((c) => c.name === 'users.read.public')).toMatchObject({
      admin_only: true,
      scopes: ['all'],
    });
    expect(staffCatalogue.find((c) => c.name === 'admin.users.manage')).toBeUndefined();

    const table = await svcctl(home, ['tokens', 'capabilities', '-o', 'table']);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME +ADMIN_ONLY +SCOPES +DESCRIPTION$/);
    expect(lines).toContainEqual(expect.stringMatching(/^me\.read +false +all +Read your discovery ledger/));
    expect(lines).toContainEqual(
      expect.stringMatching(/^projects\.read +false +all, organization, project +\S/),
    );
    expect(lines).toHaveLength(catalogue.length + 1);
  });
});
