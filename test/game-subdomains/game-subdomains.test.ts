// Game subdomains end to end (document 2 §2 "Game subdomain", §3, §4 "Game subdomains"; DECISIONS.md
// §6 "DNS and domains"): taken through the SDK, published as A and SRV records that the platform's DNS
// server answers over UDP and TCP, renamed to a new id, removed; the seed's refusals each reading back
// that nothing changed; two services racing for one name; a row that could not be published at once
// turning failed, then active when the job queue retries; the services' platform names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { randomPortPool } from '../support/edge.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { startTestPlatformDns, type TestPlatformDns } from '../support/platform-dns.js';
import { outcome, refusal } from '../support/refusal.js';
import { provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

const PLAY_TEST = '5c0a7a10-0000-4000-8000-0000000000d1';
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

let app: TestApp;
let smtp: TestSmtp;
let dns: TestPlatformDns;
let staff: Staff;
let owner: Caller;
let billing: Caller;
let stranger: Caller;
let orgId: string;
let game: Provisioned;
let rival: Provisioned;
let web: Provisioned;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PORT_POOL: randomPortPool(16) },
  });
  dns = await startTestPlatformDns(app);
  staff = await staffMember(app, smtp, 'gs-staff', ['manage_services']);
  [owner, billing, stranger] = await Promise.all([
    signedIn(app, smtp, 'gs-owner'),
    signedIn(app, smtp, 'gs-billing'),
    signedIn(app, smtp, 'gs-stranger'),
  ]);
  orgId = (
    await owner.api.organizationCreate({ body: { name: 'Games', slug: `games-${Date.now().toString(36)}` } })
  ).id;
  await owner.api.memberAdd({ path: { id: orgId }, body: { user_id: billing.userId, role: 'billing' } });
  const projectId = (
    await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Games', slug: 'games' } })
  ).id;
  [game, rival, web] = await Promise.all([
    provisionService(staff.elevated, { projectId, productSlug: 'block-game', name: 'Castle' }),
    provisionService(staff.elevated, { projectId, productSlug: 'block-game', name: 'Rival' }),
    provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' }),
  ]);
}, 180_000);
afterAll(async () => {
  await dns?.stop();
  await app?.close();
  await smtp?.close();
});

const list = (c: Caller, p: Provisioned = game) =>
  c.api.gameSubdomainList({ path: { id: p.serviceInstanceId } });
const create = (c: Caller, subdomain: string, p: Provisioned = game, parent = PLAY_TEST) =>
  c.api.gameSubdomainCreate({
    path: { id: p.serviceInstanceId },
    body: { parent_domain_id: parent, subdomain },
  });
const check = (c: Caller, subdomain: string, parent = PLAY_TEST, p: Provisioned = game) =>
  c.api.gameSubdomainAvailability({
    path: { id: p.serviceInstanceId },
    query: { parent_domain_id: parent, subdomain },
  });
const rows = () =>
  app.sql`select id, service_instance_id, subdomain, status from game_subdomains order by service_instance_id, id`;

async function primaryOf(p: Provisioned): Promise<{ ip: string; port: number }> {
  const [row] = await app.sql<{ ip: string; port: number }[]>`
    select host(external_ip) as ip, external_port as port from port_allocations
    where service_instance_id = ${p.serviceInstanceId} and is_primary`;
  return row!;
}

async function refusedWith(p: Promise<unknown>): Promise<[number, string, unknown]> {
  const e = await refusal(p);
  return [e.status, e.code, e.details];
}

async function slugOf(p: Provisioned): Promise<string> {
  const [row] = await app.sql<
    { slug: string }[]
  >`select slug from service_instances where id = ${p.serviceInstanceId}`;
  return row!.slug;
}

describe('platform names', () => {
  it("answers a game service's platform name with its primary allocation's address, and a web service's apps host", async () => {
    await dns.caughtUp();
    const name = `${await slugOf(game)}-${game.serviceInstanceId.slice(0, 8)}.${app.config.platformDomain}`;
    for (const transport of ['udp', 'tcp'] as const) {
      expect((await dns.ask(name, 'A', transport)).answers).toEqual([
        `A ${name} ${(await primaryOf(game)).ip}`,
      ]);
    }
    const webHost = `${await slugOf(web)}-${web.serviceInstanceId.slice(0, 8)}.apps.${app.config.platformDomain}`;
    expect((await dns.ask(webHost, 'A')).answers).toEqual([`A ${webHost} ${app.config.host}`]);
  });
});

describe('game subdomains', () => {
  it('lists the limit and the usable zones, and checks names', async () => {
    const listed = await list(owner);
    expect(listed.limit).toBe(1);
    expect(listed.subdomains).toEqual([]);
    expect(listed.zones).toContainEqual({ id: PLAY_TEST, name: 'play.test' });
    // Billing members read.
    expect((await list(billing)).limit).toBe(1);
    expect(await check(owner, 'Castle-One')).toEqual({ status: 'available', reason: null });
    expect(await check(owner, 'ab')).toMatchObject({
      status: 'invalid',
      reason: expect.stringContaining('3 to 32'),
    });
    expect(await check(owner, 'a_b_c')).toMatchObject({ status: 'invalid', reason: expect.any(String) });
    expect(await check(owner, 'castle', UNKNOWN)).toEqual({ status: 'zone_unavailable', reason: null });
  });

  it('publishes A and SRV records to the primary allocation when taken, answered over UDP and TCP', async () => {
    const made = await create(owner, '  Castle-One ');
    const primary = await primaryOf(game);
    expect(made).toMatchObject({
      subdomain: 'castle-one',
      parent_domain_id: PLAY_TEST,
      parent_domain_name: 'play.test',
      hostname: 'castle-one.play.test',
      status: 'active',
      has_srv_record: true,
      record_ip: primary.ip,
      record_port: primary.port,
      last_error: null,
    });
    expect(made.last_synced_at).not.toBeNull();
    expect((await list(owner)).subdomains).toEqual([made]);
    expect(await check(owner, 'castle-one')).toEqual({ status: 'taken', reason: null });
    await dns.caughtUp();
    for (const transport of ['udp', 'tcp'] as const) {
      expect((await dns.ask('castle-one.play.test', 'A', transport)).answers).toEqual([
        `A castle-one.play.test ${primary.ip}`,
      ]);
      const srv = await dns.ask('_minecraft._tcp.castle-one.play.test', 'SRV', transport);
      expect(srv.answers).toEqual([
        `SRV _minecraft._tcp.castle-one.play.test 0 5 ${primary.port} castle-one.play.test`,
      ]);
      expect(srv.additionals).toEqual([`A castle-one.play.test ${primary.ip}`]);
    }
    // `_tcp.castle-one` exists only as the parent of the SRV name: NODATA, not NXDOMAIN.
    expect((await dns.ask('_tcp.castle-one.play.test', 'A')).rcode).toBe('NOERROR');
    expect((await dns.ask('castle-one.play.test', 'AAAA')).rcode).toBe('NOERROR');
    expect((await auditEntries(app, orgId)).map((a) => a.action)).toContain('game_subdomain.created');
  });

  it("refuses with the seed's details, and callers without access with a 404, changing nothing", async () => {
    const before = await rows();
    expect(await refusedWith(create(owner, 'second'))).toEqual([
      422,
      'game-subdomain-refused',
      'already_has_subdomain',
    ]);
    expect(await refusedWith(create(owner, 'castle-one', rival))).toEqual([
      422,
      'game-subdomain-refused',
      'subdomain_taken',
    ]);
    expect(await refusedWith(create(owner, 'ab', rival))).toEqual([
      422,
      'game-subdomain-refused',
      'invalid_subdomain',
    ]);
    expect(await refusedWith(create(owner, '-abc', rival))).toEqual([
      422,
      'game-subdomain-refused',
      'invalid_subdomain',
    ]);
    expect(await refusedWith(create(owner, 'x'.repeat(33), rival))).toEqual([
      422,
      'game-subdomain-refused',
      'invalid_subdomain',
    ]);
    expect(await refusedWith(create(owner, 'fine-name', rival, UNKNOWN))).toEqual([
      422,
      'game-subdomain-refused',
      'zone_unavailable',
    ]);
    // Someone else's, a role that may not change the service, a product without game subdomains, an unknown id.
    expect(await outcome(create(stranger, 'fine-name', rival))).toEqual([404, 'not-found']);
    expect(await outcome(list(stranger))).toEqual([404, 'not-found']);
    expect(await outcome(create(billing, 'fine-name', rival))).toEqual([404, 'not-found']);
    expect(await outcome(list(owner, web))).toEqual([404, 'not-found']);
    expect(await outcome(create(owner, 'fine-name', web))).toEqual([404, 'not-found']);
    expect(await outcome(owner.api.gameSubdomainList({ path: { id: UNKNOWN } }))).toEqual([404, 'not-found']);
    const [mine] = (await list(owner)).subdomains;
    expect(
      await outcome(
        owner.api.gameSubdomainDelete({ path: { id: rival.serviceInstanceId, subdomain_id: mine!.id } }),
      ),
    ).toEqual([404, 'not-found']);
    expect(
      await outcome(
        owner.api.gameSubdomainRename({
          path: { id: game.serviceInstanceId, subdomain_id: mine!.id },
          body: { parent_domain_id: PLAY_TEST, subdomain: 'Castle-One' },
        }),
      ),
    ).toEqual([422, 'game-subdomain-refused']);
    expect(await rows()).toEqual(before);
  });

  it('renames to a new id, removing the old records, and removes', async () => {
    const [old] = (await list(owner)).subdomains;
    const renamed = await owner.api.gameSubdomainRename({
      path: { id: game.serviceInstanceId, subdomain_id: old!.id },
      body: { parent_domain_id: PLAY_TEST, subdomain: 'keep' },
    });
    expect(renamed.id).not.toBe(old!.id);
    expect(renamed).toMatchObject({ hostname: 'keep.play.test', status: 'active' });
    expect((await list(owner)).subdomains).toEqual([renamed]);
    expect(await check(owner, 'castle-one')).toEqual({ status: 'available', reason: null });
    await dns.caughtUp();
    expect((await dns.ask('castle-one.play.test', 'A')).rcode).toBe('NXDOMAIN');
    expect((await dns.ask('_minecraft._tcp.castle-one.play.test', 'SRV')).rcode).toBe('NXDOMAIN');
    expect((await dns.ask('keep.play.test', 'A', 'tcp')).answers).toHaveLength(1);
    // The old id is gone.
    expect(
      await outcome(
        owner.api.gameSubdomainDelete({ path: { id: game.serviceInstanceId, subdomain_id: old!.id } }),
      ),
    ).toEqual([404, 'not-found']);

    await owner.api.gameSubdomainDelete({ path: { id: game.serviceInstanceId, subdomain_id: renamed.id } });
    expect((await list(owner)).subdomains).toEqual([]);
    await dns.caughtUp();
    expect((await dns.ask('keep.play.test', 'A')).rcode).toBe('NXDOMAIN');
    const actions = (await auditEntries(app, orgId)).map((a) => a.action);
    expect(actions).toEqual(expect.arrayContaining(['game_subdomain.renamed', 'game_subdomain.deleted']));
  });

  it('lets one of two services racing for a name win', async () => {
    const results = await Promise.all([
      outcome(create(owner, 'contested')),
      outcome(create(owner, 'contested', rival)),
    ]);
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
    expect(results).toContainEqual([422, 'game-subdomain-refused']);
    expect(await app.sql`select 1 from game_subdomains where subdomain = 'contested'`).toHaveLength(1);
    for (const p of [game, rival]) {
      for (const s of (await list(owner, p)).subdomains) {
        await owner.api.gameSubdomainDelete({ path: { id: p.serviceInstanceId, subdomain_id: s.id } });
      }
    }
  });

  it('keeps a row it could not publish, failed with the reason, and publishes it when the job retries', async () => {
    // A service without its primary allocation (what a provisioning that found no free port would leave).
    const [saved] = await app.sql`
      delete from port_allocations where service_instance_id = ${rival.serviceInstanceId} and is_primary returning *`;
    const made = await create(owner, 'later', rival);
    expect(made).toMatchObject({ status: 'pending', record_ip: null, record_port: null });
    expect(made.last_error).toEqual(expect.any(String));
    await dns.caughtUp();
    expect((await dns.ask('later.play.test', 'A')).rcode).toBe('NXDOMAIN');
    // The job's first attempt fails (no allocation yet) and schedules the next.
    const failedDeadline = Date.now() + 20_000;
    while ((await list(owner, rival)).subdomains[0]!.status !== 'failed') {
      if (Date.now() > failedDeadline) throw new Error('the publishing job never ran');
      await new Promise((r) => setTimeout(r, 50));
    }
    await app.sql`insert into port_allocations ${app.sql(saved!)}`;
    const deadline = Date.now() + 30_000;
    let row = (await list(owner, rival)).subdomains[0]!;
    while (row.status !== 'active') {
      if (Date.now() > deadline) throw new Error(`the row stayed ${row.status}`);
      await new Promise((r) => setTimeout(r, 100));
      row = (await list(owner, rival)).subdomains[0]!;
    }
    expect(row).toMatchObject({ id: made.id, record_port: saved!.external_port, last_error: null });
    await dns.caughtUp();
    expect((await dns.ask('later.play.test', 'A')).answers).toEqual([`A later.play.test ${row.record_ip}`]);
  });

  it('is the 404 of an unknown id while the subscription is suspended', async () => {
    await staff.elevated.adminSubscriptionSuspend({ path: { id: game.subscriptionId } });
    expect(await outcome(list(owner))).toEqual([404, 'not-found']);
    expect(await outcome(create(owner, 'suspended'))).toEqual([404, 'not-found']);
    expect(await app.sql`select 1 from game_subdomains where subdomain = 'suspended'`).toHaveLength(0);
    await staff.elevated.adminSubscriptionResume({ path: { id: game.subscriptionId } });
  });
});
