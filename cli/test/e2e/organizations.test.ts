// The organization commands against the real server: orgs (list, show, create, update,
// billing-country, icon set FILE and delete, standing, delete), members (list, add, update, remove),
// projects (list, list --org, show, create, update, stats [id], delete) and audit list, with --page,
// --page-size and --all streaming every page through the SDK's paginator, in every output format.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { newAccount } from '../../../test/support/auth.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { writeCredentials } from '../../src/credentials.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { runCli, tempDir, tempHome, type CliRun } from '../support/run-cli.js';

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

interface Organization {
  id: string;
  name: string;
  slug: string;
  role: string;
  personal: boolean;
  billing_country_code: string | null;
  icon_asset_id: string | null;
}
interface Project {
  id: string;
  organization_id: string;
  slug: string;
  name: string;
  description: string | null;
}
interface AuditEntry {
  id: string;
  action: string;
  target: { type: string; id: string | null };
}
interface AuditPage {
  data: AuditEntry[];
  meta: { page: number; page_size: number; total_items: number; total_pages: number };
}

const json = <T>(stdout: string) => JSON.parse(stdout) as T;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

/** Runs a command that must succeed; answers its JSON. */
async function ok<T>(home: Home, args: string[], run?: CliRun): Promise<T> {
  const r = await svcctl(home, args, run);
  expect(r.stderr, args.join(' ')).toBe('');
  expect(r.code, args.join(' ')).toBe(0);
  return r.stdout === '' ? (undefined as T) : json<T>(r.stdout);
}

// A 1×1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

describe('svcctl orgs', () => {
  it('create, list, show, update, billing-country, standing and delete, in json, yaml and table', async () => {
    const { home } = await signedIn('orgs');
    const slug = unique('acme');
    const org = await ok<Organization>(home, ['orgs', 'create', '--name', 'Acme', '--slug', slug]);
    expect(org).toMatchObject({ name: 'Acme', slug, role: 'owner', personal: false });

    const list = await ok<Organization[]>(home, ['orgs', 'list']);
    expect(list.map((o) => o.personal)).toEqual([true, false]);
    expect(list[1]).toEqual(org);
    expect(parseYaml((await svcctl(home, ['orgs', 'list', '-o', 'yaml'])).stdout)).toEqual(list);
    // The table shows the columns chosen for organizations, not every field.
    const table = (await svcctl(home, ['orgs', 'list', '-o', 'table'])).stdout.split('\n');
    expect(table[0]).toMatch(/^ID +SLUG +NAME +ROLE +PERSONAL +COUNTRY$/);
    expect(table.find((l) => l.includes(slug))).toMatch(
      new RegExp(`^${org.id} +${slug} +Acme +owner +false +-$`),
    );

    expect(await ok(home, ['orgs', 'show', org.id])).toEqual(org);
    expect(await ok(home, ['orgs', 'by-slug', slug])).toEqual(org);
    const renamed = await ok<Organization>(home, ['orgs', 'update', org.id, '--name', 'Acme Ltd']);
    expect(renamed).toMatchObject({ name: 'Acme Ltd', slug });
    const country = await ok<Organization>(home, ['orgs', 'billing-country', org.id, '--country-code', 'at']);
    expect(country.billing_country_code).toBe('AT');
    const again = await svcctl(home, ['orgs', 'billing-country', org.id, '--country-code', 'DE']);
    expect(again.code).toBe(ExitCode.conflict);
    expect(again.stderr).toMatch(/^ {2}code: +billing-country-already-set$/m);

    expect(await ok(home, ['orgs', 'standing', org.id])).toMatchObject({ restricted: expect.any(Boolean) });
    const standing = await svcctl(home, ['orgs', 'standing', org.id, '-o', 'table']);
    expect(standing.stdout).toMatch(/^restricted: +(true|false)$/m);

    expect(await svcctl(home, ['orgs', 'delete', org.id])).toMatchObject({ code: 0, stdout: '' });
    const gone = await svcctl(home, ['orgs', 'show', org.id]);
    expect(gone.code).toBe(ExitCode.notFound);
    expect(gone.stderr).toMatch(/^ {2}code: +not-found$/m);
  });

  it('icon set ID FILE uploads the icon (also from stdin); icon delete removes it', async () => {
    const { home } = await signedIn('orgs-icon');
    const org = await ok<Organization>(home, [
      'orgs',
      'create',
      '--name',
      'Iconic',
      '--slug',
      unique('iconic'),
    ]);
    const file = join(tempDir('svcctl-icon-'), 'icon.png');
    writeFileSync(file, PNG);
    const set = await ok<Organization>(home, ['orgs', 'icon', 'set', org.id, file]);
    expect(set.icon_asset_id).toMatch(/^[0-9a-f-]{36}$/);
    const out = join(tempDir('svcctl-icon-'), 'icon.webp');
    expect((await svcctl(home, ['assets', 'get', set.icon_asset_id!, '--output', out])).code).toBe(0);
    const fromStdin = await ok<Organization>(home, ['orgs', 'icon', 'set', org.id, '-'], { input: PNG });
    expect(fromStdin.icon_asset_id).not.toBe(set.icon_asset_id);

    expect(await svcctl(home, ['orgs', 'icon', 'delete', org.id])).toMatchObject({ code: 0, stdout: '' });
    expect((await ok<Organization>(home, ['orgs', 'show', org.id])).icon_asset_id).toBeNull();

    const missing = await svcctl(home, ['orgs', 'icon', 'set', org.id]);
    expect(missing.code).toBe(ExitCode.usage);
    expect(missing.stderr).toContain("missing required argument 'FILE'");
    const help = await runCli(['orgs', 'icon', 'set', '--help']);
    expect(help.stdout).toMatch(/^Usage: svcctl orgs icon set \[options\] <ORG_ID> <FILE>$/m);
    expect(help.stdout).toContain(`PUT /api/v2/organizations/{id}/icon`);
    expect((await runCli(['orgs', 'icon', '--help'])).stdout).toMatch(/^ {2}set <ORG_ID> <FILE> +Upload/m);
  });
});

describe('svcctl members', () => {
  it('add, list, update and remove; a member may not manage them (exit 4)', async () => {
    const owner = await signedIn('members-owner');
    const other = await signedIn('members-other');
    const org = await ok<Organization>(owner.home, [
      'orgs',
      'create',
      '--name',
      'Team',
      '--slug',
      unique('team'),
    ]);

    const added = await ok<{ user_id: string; role: string }>(owner.home, [
      'members',
      'add',
      org.id,
      '--user-id',
      other.userId,
    ]);
    expect(added).toMatchObject({ user_id: other.userId, role: 'member' });
    const members = await ok<{ user_id: string; role: string }[]>(owner.home, ['members', 'list', org.id]);
    expect(members.map((m) => [m.user_id, m.role]).sort()).toEqual(
      [
        [owner.userId, 'owner'],
        [other.userId, 'member'],
      ].sort(),
    );
    const table = (await svcctl(owner.home, ['members', 'list', org.id, '-o', 'table'])).stdout.split('\n');
    expect(table[0]).toMatch(/^USER_ID +NAME +EMAIL +ROLE +JOINED$/);
    // Added by id, the member's address is not shown to the adder (issue 26: an id must not reveal an
    // address): the EMAIL column reads '-'.
    const row = table.find((l) => l.startsWith(other.userId))!;
    expect(row).not.toContain(other.email);
    expect(row.split(/ {2,}/)[2]).toBe('-');

    // The new member sees the organization, but may neither add people nor read the audit log.
    expect((await ok<Organization>(other.home, ['orgs', 'show', org.id])).role).toBe('member');
    const refused = await svcctl(other.home, ['audit', 'list', org.id]);
    expect(refused.code).toBe(ExitCode.auth);
    expect(refused.stderr).toMatch(/^ {2}code: +forbidden$/m);

    const promoted = await ok<{ role: string }>(owner.home, [
      'members',
      'update',
      org.id,
      other.userId,
      '--role',
      'admin',
    ]);
    expect(promoted.role).toBe('admin');

    // Adding them again: with the role they hold, nothing to do (exit 0, the membership); with another
    // role (member, the default, or given), a refusal that says so, and nothing changes.
    const again = await ok<{ role: string }>(owner.home, [
      'members',
      'add',
      org.id,
      '--user-id',
      other.userId,
      '--role',
      'admin',
    ]);
    expect(again.role).toBe('admin');
    for (const extra of [[], ['--role', 'member'], ['--data', '{"role": "billing"}']]) {
      const asked = extra.length === 0 ? 'member' : extra[1]!.includes('billing') ? 'billing' : 'member';
      const r = await svcctl(owner.home, ['members', 'add', org.id, '--user-id', other.userId, ...extra]);
      expect(r.code).toBe(ExitCode.conflict);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^error: [^\n]+\n$/);
      expect(r.stderr).toContain(
        `(${other.userId}) is already a member of this organization, as admin; nothing was changed. To make them ${asked}: svcctl members update ${org.id} ${other.userId} --role ${asked}\n`,
      );
    }
    const roles = await ok<{ user_id: string; role: string }[]>(owner.home, ['members', 'list', org.id]);
    expect(roles.find((m) => m.user_id === other.userId)!.role).toBe('admin');
    expect((await svcctl(other.home, ['audit', 'list', org.id])).code).toBe(0);

    expect(await svcctl(owner.home, ['members', 'remove', org.id, other.userId])).toMatchObject({
      code: 0,
      stdout: '',
    });
    const outside = await svcctl(other.home, ['audit', 'list', org.id]);
    expect(outside.code).toBe(ExitCode.notFound);
    // Some twenty svcctl runs in a row.
  }, 120_000);
});

describe('svcctl projects', () => {
  it('create, list (all and --org), show, update, stats [id] and delete', async () => {
    const { home } = await signedIn('projects');
    const org = await ok<Organization>(home, [
      'orgs',
      'create',
      '--name',
      'Works',
      '--slug',
      unique('works'),
    ]);
    const project = await ok<Project>(home, [
      'projects',
      'create',
      org.id,
      '--name',
      'Site',
      '--slug',
      'site',
      '--description',
      'the web site',
    ]);
    expect(project).toMatchObject({ organization_id: org.id, slug: 'site', description: 'the web site' });

    // Every project of mine: the personal organization's games project and this one.
    const all = await ok<Project[]>(home, ['projects', 'list']);
    expect(all.map((p) => p.slug).sort()).toEqual(['games', 'site']);
    const inOrg = await ok<Project[]>(home, ['projects', 'list', '--org', org.id]);
    expect(inOrg).toEqual([project]);
    expect(await ok(home, ['orgs', 'projects', org.id])).toEqual(inOrg);
    const table = (await svcctl(home, ['projects', 'list', '-o', 'table'])).stdout.split('\n');
    expect(table[0]).toMatch(/^ID +ORGANIZATION_ID +SLUG +NAME +MANAGED +DESCRIPTION$/);
    expect(table.find((l) => l.startsWith(project.id))).toMatch(/ site +Site +false +the web site$/);
    const notMine = await svcctl(home, ['projects', 'list', '--org', '00000000-0000-4000-8000-000000000000']);
    expect(notMine.code).toBe(ExitCode.notFound);

    expect(await ok(home, ['projects', 'show', project.id])).toEqual(project);
    const updated = await ok<Project>(home, ['projects', 'update', project.id, '--name', 'Web site']);
    expect(updated).toMatchObject({ name: 'Web site', description: 'the web site' });
    const cleared = await ok<Project>(home, [
      'projects',
      'update',
      project.id,
      '--data',
      '{"description":null}',
    ]);
    expect(cleared.description).toBeNull();

    const one = await ok<{ project_id: string; resource_count: number }>(home, [
      'projects',
      'stats',
      project.id,
    ]);
    expect(one).toEqual({ project_id: project.id, resource_count: 0, cycle_spend: [] });
    const stats = await ok<{ project_id: string }[]>(home, ['projects', 'stats']);
    expect(stats.map((s) => s.project_id)).toEqual(all.map((p) => p.id));
    const statsTable = (await svcctl(home, ['projects', 'stats', '-o', 'table'])).stdout.split('\n');
    expect(statsTable[0]).toMatch(/^PROJECT_ID +RESOURCES +CYCLE_SPEND$/);
    expect(statsTable.find((l) => l.startsWith(project.id))).toMatch(/ 0 +-$/);
    // `projects stats` covers the list: its own words still run, but are not listed.
    expect(await ok(home, ['projects', 'stats-all'])).toEqual(stats);
    const help = (await runCli(['projects', '--help'])).stdout;
    expect(help).toMatch(/^ {2}stats \[PROJECT_ID\] +/m);
    expect(help).toMatch(/^ {2}list \[options\] +/m);
    expect(help).not.toContain('stats-all');

    expect(await svcctl(home, ['projects', 'delete', project.id])).toMatchObject({ code: 0, stdout: '' });
    expect((await svcctl(home, ['projects', 'show', project.id])).code).toBe(ExitCode.notFound);
  });
});

describe('svcctl audit list', () => {
  const ENTRIES = 230;
  let owner: Awaited<ReturnType<typeof signedIn>>;
  let org: Organization;

  beforeAll(async () => {
    owner = await signedIn('audit');
    org = await ok<Organization>(owner.home, [
      'orgs',
      'create',
      '--name',
      'Audited',
      '--slug',
      unique('audited'),
    ]);
    // The create wrote one entry; the rest, entry n written n seconds later, go in as SQL.
    await app.sql`
      insert into audit_entries (id, organization_id, actor_user_id, action, target_type, target_id, created_at)
      select gen_random_uuid(), ${org.id}, ${owner.userId}, 'member.added', 'member', n::text,
             now() + n * interval '1 second'
      from generate_series(1, ${ENTRIES - 1}) n`;
  });

  it('prints one page by default, and the page asked for with --page and --page-size', async () => {
    const first = await ok<AuditPage>(owner.home, ['audit', 'list', org.id]);
    expect(first.data).toHaveLength(20);
    expect(first.meta).toEqual({ page: 1, page_size: 20, total_items: ENTRIES, total_pages: 12 });
    expect(first.data[0]!.target.id).toBe(String(ENTRIES - 1));

    const last = await ok<AuditPage>(owner.home, [
      'audit',
      'list',
      org.id,
      '--page',
      '3',
      '--page-size',
      '100',
    ]);
    expect(last.meta).toEqual({ page: 3, page_size: 100, total_items: ENTRIES, total_pages: 3 });
    expect(last.data.map((e) => e.action).at(-1)).toBe('organization.created');

    const filtered = await ok<AuditPage>(owner.home, [
      'audit',
      'list',
      org.id,
      '--action',
      'organization.created',
    ]);
    expect(filtered.meta.total_items).toBe(1);

    const table = (await svcctl(owner.home, ['audit', 'list', org.id, '--page-size', '3', '-o', 'table']))
      .stdout;
    const lines = table.split('\n');
    expect(lines[0]).toMatch(/^TIME +ACTION +ACTOR +TARGET$/);
    expect(lines[1]).toMatch(new RegExp(`^\\S+Z +member\\.added +${owner.userId} +member ${ENTRIES - 1}$`));
    expect(table).toContain(`page 1 of ${Math.ceil(ENTRIES / 3)}, ${ENTRIES} items`);

    const tooBig = await svcctl(owner.home, ['audit', 'list', org.id, '--page-size', '101']);
    expect(tooBig.code).toBe(ExitCode.invalid);
  });

  it('--all streams every entry once, most recent first: one page of them all in json and yaml, or table rows', async () => {
    const whole = await ok<AuditPage>(owner.home, ['audit', 'list', org.id, '--all']);
    // The shape of one page (a script reads .data either way), the whole list being that page.
    expect(whole.meta).toEqual({ page: 1, page_size: ENTRIES, total_items: ENTRIES, total_pages: 1 });
    const all = whole.data;
    expect(all).toHaveLength(ENTRIES);
    expect(new Set(all.map((e) => e.id)).size).toBe(ENTRIES);
    expect(all[0]!.target.id).toBe(String(ENTRIES - 1));
    expect(all.at(-1)!.action).toBe('organization.created');
    // Written item by item, the text is exactly what printing the whole answer at once gives.
    const raw = (await svcctl(owner.home, ['audit', 'list', org.id, '--all', '-o', 'json'])).stdout;
    expect(raw).toBe(`${JSON.stringify(whole, null, 2)}\n`);

    // svcctl api --paginate walks the same pages of the raw route and prints the same one page.
    const paged = await ok<AuditPage>(owner.home, [
      'api', 'GET', `/organizations/${org.id}/audit`, '--paginate', '--query', 'page_size=4',
    ]);
    expect(paged).toEqual(whole);
    const onePage = await ok<AuditPage>(owner.home, ['api', 'GET', `/organizations/${org.id}/audit`, '--query', 'page_size=4']);
    expect(onePage.data).toHaveLength(4);
    const notGet = await svcctl(owner.home, ['api', 'POST', '/organizations', '--paginate', '--data', '{}']);
    expect(notGet.code).toBe(ExitCode.usage);

    const small = await ok<AuditPage>(owner.home, ['audit', 'list', org.id, '--all', '--page-size', '7']);
    expect(small).toEqual(whole);
    const yaml = await svcctl(owner.home, ['audit', 'list', org.id, '--all', '-o', 'yaml']);
    expect(parseYaml(yaml.stdout)).toEqual(whole);

    const table = (await svcctl(owner.home, ['audit', 'list', org.id, '--all', '-o', 'table'])).stdout;
    const lines = table.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^TIME +ACTION +ACTOR +TARGET$/);
    expect(lines).toHaveLength(ENTRIES + 1);
    // Rows after the first page keep the first page's columns.
    const at = lines[0]!.indexOf('ACTION');
    expect(lines.every((l, i) => i === 0 || l.slice(at).startsWith(all[i - 1]!.action))).toBe(true);

    const filtered = await ok<AuditPage>(owner.home, [
      'audit',
      'list',
      org.id,
      '--all',
      '--action',
      'organization.created',
    ]);
    expect(filtered.data.map((e) => e.action)).toEqual(['organization.created']);
    const none = await svcctl(owner.home, ['audit', 'list', org.id, '--all', '--action', 'nothing.here']);
    expect(none.code).toBe(0);
    expect(JSON.parse(none.stdout)).toEqual({
      data: [],
      meta: { page: 1, page_size: 100, total_items: 0, total_pages: 0 },
    });
    const noneTable = await svcctl(owner.home, [
      'audit',
      'list',
      org.id,
      '--all',
      '--action',
      'x.y',
      '-o',
      'table',
    ]);
    expect(noneTable.stdout).toBe('(none)\n');
  });

  it('--all with --page is a usage error; --all of an organization not mine is exit 3', async () => {
    const both = await svcctl(owner.home, ['audit', 'list', org.id, '--all', '--page', '2']);
    expect(both.code).toBe(ExitCode.usage);
    expect(both.stderr).toContain('leave out --page');
    const stranger = await signedIn('audit-stranger');
    const hidden = await svcctl(stranger.home, ['audit', 'list', org.id, '--all']);
    expect(hidden.code).toBe(ExitCode.notFound);
    expect(hidden.stdout).toBe('');
    expect(hidden.stderr).toMatch(/^ {2}code: +not-found$/m);
  });

  it('--help lists --all', async () => {
    const r = await runCli(['audit', 'list', '--help']);
    expect(r.stdout).toMatch(/^Usage: svcctl audit list \[options\] <ORG_ID>$/m);
    expect(r.stdout).toMatch(/^ {2}--all +every page/m);
    expect(r.stdout).toMatch(/^ {2}--page-size <integer> /m);
  });
});
