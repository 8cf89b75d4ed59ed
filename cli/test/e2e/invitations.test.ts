// The invitation commands against the real server and a real SMTP server: invitations create, list
// (json and table), revoke as the organization's Owner; show, accept, decline and allow-reinvite as the
// invitee, whose link arrives by mail; refusals exit with the documented codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

/** A new account whose session is saved for the profile, as `svcctl login` saves it. */
async function signedIn(tag: string): Promise<{ home: Home; userId: string; email: string }> {
  const { email, session } = await newAccount(app, smtp, tag);
  const home = tempHome();
  await writeCredentials(
    'default',
    { token: session.token, refresh_token: session.refresh_token, session_id: session.session_id },
    home.SVCCTL_CONFIG_DIR,
  );
  return { home, userId: session.user.id, email };
}

interface Invitation {
  id: string;
  email: string;
  role: string;
  status: string;
}

const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

/** Runs a command that must succeed; answers its JSON (undefined for no output). */
async function ok<T>(home: Home, args: string[]): Promise<T> {
  const r = await svcctl(home, args);
  expect(r.stderr, args.join(' ')).toBe('');
  expect(r.code, args.join(' ')).toBe(0);
  return r.stdout === '' ? (undefined as T) : (JSON.parse(r.stdout) as T);
}

describe('svcctl invitations', () => {
  it('create, list, show, accept; decline, allow-reinvite and revoke; refusals exit 3, 4 and 6', async () => {
    const owner = await signedIn('cli-inviter');
    const invitee = await signedIn('cli-invitee');
    const org = await ok<{ id: string }>(owner.home, [
      'orgs',
      'create',
      '--name',
      'Crew',
      '--slug',
      unique('crew'),
    ]);

    const created = await ok<Invitation>(owner.home, [
      'invitations',
      'create',
      org.id,
      '--email',
      invitee.email,
      '--role',
      'admin',
    ]);
    expect(created).toMatchObject({ email: invitee.email, role: 'admin', status: 'pending' });
    const mail = await smtp.waitFor((m) => m.text.includes(`/invitations/${created.id}`));
    const linked = /\/invitations\/([0-9a-f-]{36})/.exec(mail.text)![1]!;

    const listed = await ok<Invitation[]>(owner.home, ['invitations', 'list', org.id]);
    expect(listed.map((i) => i.id)).toEqual([created.id]);
    const table = (await svcctl(owner.home, ['invitations', 'list', org.id, '-o', 'table'])).stdout.split(
      '\n',
    );
    expect(table[0]).toMatch(/^ID +EMAIL +ROLE +STATUS +EXPIRES_AT$/);
    expect(table[1]).toMatch(
      new RegExp(`^${created.id} +${invitee.email.replace(/[.+]/g, '\\$&')} +admin +pending +\\S+Z$`),
    );

    const page = await ok<Record<string, unknown>>(invitee.home, ['invitations', 'show', linked]);
    expect(page).toMatchObject({ id: created.id, organization_id: org.id, role: 'admin', status: 'pending' });
    expect(page).not.toHaveProperty('email');
    // Someone else reads the 404 of an unknown id (exit 3).
    const stranger = await svcctl(owner.home, ['invitations', 'show', linked]);
    expect(stranger.code).toBe(ExitCode.notFound);
    expect(stranger.stderr).toMatch(/^ {2}code: +not-found$/m);

    const membership = await ok<{ role: string; user_id: string }>(invitee.home, [
      'invitations',
      'accept',
      linked,
    ]);
    expect(membership).toMatchObject({ user_id: invitee.userId, role: 'admin' });
    const twice = await svcctl(invitee.home, ['invitations', 'accept', linked]);
    expect(twice.code).toBe(ExitCode.conflict);
    expect(twice.stderr).toMatch(/^ {2}code: +invitation-not-pending$/m);

    // Decline, the cool-down, and lifting it.
    const other = await signedIn('cli-decliner');
    const second = await ok<Invitation>(owner.home, [
      'invitations',
      'create',
      org.id,
      '--email',
      other.email,
    ]);
    expect(await svcctl(other.home, ['invitations', 'decline', second.id])).toMatchObject({
      code: 0,
      stdout: '',
    });
    const blocked = await svcctl(owner.home, ['invitations', 'create', org.id, '--email', other.email]);
    expect(blocked.code).toBe(ExitCode.conflict);
    expect(blocked.stderr).toMatch(/^ {2}code: +reinvite-cooldown$/m);
    expect(await svcctl(other.home, ['invitations', 'allow-reinvite', second.id])).toMatchObject({
      code: 0,
      stdout: '',
    });
    const third = await ok<Invitation>(owner.home, ['invitations', 'create', org.id, '--email', other.email]);

    // Outside the organization its invitations are not found (exit 3); the Owner revokes; an Admin may
    // not invite an Owner (exit 4).
    const member = await svcctl(other.home, ['invitations', 'list', org.id]);
    expect(member.code).toBe(ExitCode.notFound);
    expect(await svcctl(owner.home, ['invitations', 'revoke', org.id, third.id])).toMatchObject({
      code: 0,
      stdout: '',
    });
    expect((await ok<Invitation>(other.home, ['invitations', 'show', third.id])).status).toBe('revoked');
    const statuses = await ok<Invitation[]>(owner.home, [
      'invitations',
      'list',
      org.id,
      '--status',
      'revoked',
    ]);
    expect(statuses.map((i) => i.id)).toEqual([third.id]);
    const asMember = await svcctl(invitee.home, [
      'invitations',
      'create',
      org.id,
      '--email',
      'x@example.test',
      '--role',
      'owner',
    ]);
    expect(asMember.code).toBe(ExitCode.auth);
    expect(asMember.stderr).toMatch(/^ {2}code: +member-outranks-caller$/m);

    const help = await runCli(['invitations', '--help']);
    for (const word of ['list', 'create', 'revoke', 'show', 'accept', 'decline', 'allow-reinvite']) {
      expect(help.stdout).toMatch(new RegExp(`^ {2}${word}\\b`, 'm'));
    }
  });
});
