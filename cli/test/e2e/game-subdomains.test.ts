// svcctl game-subdomain show | check | set | rename | remove and admin parent-domains list | add |
// remove against the real server, with the platform DNS answering what they publish, and a refusal's
// exit code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember, type Staff } from '../../../test/admin-content/staff.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { newAccount } from '../../../test/support/auth.js';
import { randomPortPool } from '../../../test/support/edge.js';
import { startTestPlatformDns, type TestPlatformDns } from '../../../test/support/platform-dns.js';
import { provisionService, type Provisioned } from '../../../test/support/services.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { runCli } from '../support/run-cli.js';

const PLAY_TEST = '5c0a7a10-0000-4000-8000-0000000000d1';

let app: TestApp;
let smtp: TestSmtp;
let dns: TestPlatformDns;
let token: string;
let staff: Staff;
let game: Provisioned;

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PORT_POOL: randomPortPool(10) },
  });
  dns = await startTestPlatformDns(app);
  const owner = await newAccount(app, smtp, 'gsc-owner');
  staff = await staffMember(app, smtp, 'gsc-staff', ['manage_services']);
  token = owner.session.token;
  const [personal] = await app.sql<{ id: string }[]>`
    select id from organizations where personal_owner_id = ${owner.session.user.id}`;
  const [project] = await app.sql<{ id: string }[]>`
    select id from projects where organization_id = ${personal!.id} order by created_at limit 1`;
  game = await provisionService(staff.elevated, {
    projectId: project!.id,
    productSlug: 'block-game',
    name: 'Cli game',
  });
}, 180_000);
afterAll(async () => {
  await dns?.stop();
  await app?.close();
  await smtp?.close();
});

const svcctl = (args: string[], as = token) =>
  runCli(args, { env: { SVCCTL_BASE_URL: app.baseUrl, SVCCTL_TOKEN: as } });
const json = <T>(stdout: string) => JSON.parse(stdout) as T;

describe('svcctl game-subdomain', () => {
  it('checks, sets, shows, renames and removes a game subdomain that the platform DNS answers', async () => {
    const id = game.serviceInstanceId;
    const checked = await svcctl([
      'game-subdomain',
      'check',
      id,
      '--parent-domain-id',
      PLAY_TEST,
      '--subdomain',
      'cli-castle',
      '-o',
      'json',
    ]);
    expect(checked.code, checked.stderr).toBe(0);
    expect(json(checked.stdout)).toEqual({ status: 'available', reason: null });

    const set = await svcctl([
      'game-subdomain',
      'set',
      id,
      '--parent-domain-id',
      PLAY_TEST,
      '--subdomain',
      'cli-castle',
      '-o',
      'json',
    ]);
    expect(set.code, set.stderr).toBe(0);
    const made = json<{ id: string; hostname: string; status: string; record_port: number }>(set.stdout);
    expect(made).toMatchObject({ hostname: 'cli-castle.play.test', status: 'active' });
    await dns.caughtUp();
    expect((await dns.ask('_minecraft._tcp.cli-castle.play.test', 'SRV')).answers).toEqual([
      `SRV _minecraft._tcp.cli-castle.play.test 0 5 ${made.record_port} cli-castle.play.test`,
    ]);

    const again = await svcctl([
      'game-subdomain',
      'set',
      id,
      '--parent-domain-id',
      PLAY_TEST,
      '--subdomain',
      'other',
    ]);
    expect(again.code).toBe(ExitCode.conflict);
    expect(again.stderr).toContain('game-subdomain-refused');

    const shown = await svcctl(['game-subdomain', 'show', id, '-o', 'json']);
    expect(json<{ limit: number; subdomains: { id: string }[] }>(shown.stdout)).toMatchObject({
      limit: 1,
      subdomains: [{ id: made.id }],
    });

    const renamed = await svcctl([
      'game-subdomain',
      'rename',
      id,
      made.id,
      '--parent-domain-id',
      PLAY_TEST,
      '--subdomain',
      'cli-keep',
      '-o',
      'json',
    ]);
    expect(renamed.code, renamed.stderr).toBe(0);
    const next = json<{ id: string; hostname: string }>(renamed.stdout);
    expect(next.id).not.toBe(made.id);
    expect(next.hostname).toBe('cli-keep.play.test');

    const removed = await svcctl(['game-subdomain', 'remove', id, next.id]);
    expect(removed.code, removed.stderr).toBe(0);
    await dns.caughtUp();
    expect((await dns.ask('cli-keep.play.test', 'A')).rcode).toBe('NXDOMAIN');
  });
});

describe('svcctl admin parent-domains', () => {
  it('adds, lists and removes a parent domain as elevated staff; a customer is refused', async () => {
    const added = await svcctl(
      ['admin', 'parent-domains', 'add', '--name', 'cli.example.org', '-o', 'json'],
      staff.elevatedToken,
    );
    expect(added.code, added.stderr).toBe(0);
    const zone = json<{ id: string; name: string }>(added.stdout);
    expect(zone.name).toBe('cli.example.org');
    await dns.caughtUp();
    expect((await dns.ask('cli.example.org', 'SOA', 'tcp')).rcode).toBe('NOERROR');

    const listed = await svcctl(['admin', 'parent-domains', 'list', '-o', 'json'], staff.elevatedToken);
    expect(json<{ data: { name: string }[] }>(listed.stdout).data.map((p) => p.name)).toEqual(
      expect.arrayContaining(['cli.example.org', 'play.test']),
    );
    const refused = await svcctl(['admin', 'parent-domains', 'add', '--name', 'x.example.org']);
    expect(refused.code).toBe(ExitCode.auth);
    expect(await app.sql`select 1 from parent_domains where name = 'x.example.org'`).toHaveLength(0);

    const removed = await svcctl(['admin', 'parent-domains', 'remove', zone.id], staff.elevatedToken);
    expect(removed.code, removed.stderr).toBe(0);
    await dns.caughtUp();
    expect((await dns.ask('cli.example.org', 'SOA')).rcode).toBe('REFUSED');
  });
});
