// The platform's authoritative DNS server (DECISIONS.md §6 "DNS and domains") asked over real UDP and
// TCP, and staff's parent domains: SOA and NS at each apex, NXDOMAIN against NODATA, REFUSED outside its
// zones, a registered zone served on the notification alone, every refusal of the admin routes reading
// back that nothing changed, and a parent domain no organization may claim.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { signedIn, type Caller } from '../support/organizations.js';
import { startTestPlatformDns, type TestPlatformDns } from '../support/platform-dns.js';
import { outcome } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { startUnbound } from '../support/unbound.js';

let app: TestApp;
let smtp: TestSmtp;
let dns: TestPlatformDns;
let staff: Staff;
let otherStaff: Staff;
let customer: Caller;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PLATFORM_DOMAIN: 'hosting.test' },
  });
  dns = await startTestPlatformDns(app);
  [staff, otherStaff, customer] = await Promise.all([
    staffMember(app, smtp, 'dns-staff', ['manage_services']),
    staffMember(app, smtp, 'dns-billing-staff', ['manage_billing']),
    signedIn(app, smtp, 'dns-customer'),
  ]);
}, 120_000);
afterAll(async () => {
  await dns?.stop();
  await app?.close();
  await smtp?.close();
});

const parentRows = () => app.sql`select id, name from parent_domains order by name`;

/** Asks until `check` holds (the server reloads on its own notification), for at most 5 s. */
async function eventually(question: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await question())) {
    if (Date.now() > deadline) throw new Error('the DNS server never served the change');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the platform DNS server', () => {
  it('answers SOA and NS at the apex of the platform zone and of play.test, over UDP and TCP, authoritatively', async () => {
    for (const transport of ['udp', 'tcp'] as const) {
      const soa = await dns.ask('play.test', 'SOA', transport);
      expect(soa).toMatchObject({
        rcode: 'NOERROR',
        aa: true,
        answers: ['SOA play.test ns1.hosting.test hostmaster.hosting.test'],
      });
      const ns = await dns.ask('PLAY.test.', 'NS', transport);
      expect(ns.rcode).toBe('NOERROR');
      expect(ns.answers).toEqual(['NS play.test ns1.hosting.test']);
      // The name server's address comes along (its own zone's A record).
      expect(ns.additionals).toEqual([`A ns1.hosting.test ${app.config.host}`]);
      expect((await dns.ask('hosting.test', 'SOA', transport)).answers).toEqual([
        'SOA hosting.test ns1.hosting.test hostmaster.hosting.test',
      ]);
    }
  });

  it('says NXDOMAIN for a name that does not exist, NODATA for a type an existing name lacks, REFUSED outside its zones', async () => {
    for (const transport of ['udp', 'tcp'] as const) {
      const missing = await dns.ask('nobody.play.test', 'A', transport);
      expect(missing).toMatchObject({ rcode: 'NXDOMAIN', aa: true, answers: [] });
      expect(missing.authorities).toEqual(['SOA play.test ns1.hosting.test hostmaster.hosting.test']);
      const nodata = await dns.ask('play.test', 'A', transport);
      expect(nodata).toMatchObject({ rcode: 'NOERROR', aa: true, answers: [] });
      expect(nodata.authorities).toEqual(['SOA play.test ns1.hosting.test hostmaster.hosting.test']);
      const nodataNs = await dns.ask('ns1.hosting.test', 'AAAA', transport);
      expect(nodataNs).toMatchObject({ rcode: 'NOERROR', answers: [] });
      expect(nodataNs.authorities).toHaveLength(1);
      const outside = await dns.ask('example.com', 'A', transport);
      expect(outside).toMatchObject({ rcode: 'REFUSED', aa: false, answers: [], authorities: [] });
    }
  });
});

describe('through a recursive resolver', () => {
  it("is what unbound answers for the zones stubbed to it: records, NXDOMAIN with the zone's SOA, NODATA", async () => {
    const unbound = await startUnbound([
      { zone: 'play.test', server: dns.dns.address },
      { zone: 'hosting.test', server: dns.dns.address },
    ]);
    if (!unbound) return; // unbound not installed (.ci/run installs it)
    try {
      const NXDOMAIN = 3;
      const ns = await unbound.resolve('ns1.hosting.test', 'A');
      expect(ns.header.rcode).toBe(0);
      expect(ns.answers.map((a) => (a as { address?: string }).address)).toEqual([app.config.host]);
      const missing = await unbound.resolve('nobody.play.test', 'A');
      expect(missing.header.rcode).toBe(NXDOMAIN);
      expect(missing.authorities.map((a) => a.name)).toEqual(['play.test']);
      const nodata = await unbound.resolve('play.test', 'A');
      expect(nodata.header.rcode).toBe(0);
      expect(nodata.answers).toEqual([]);
    } finally {
      await unbound.stop();
    }
  });
});

describe('parent domains', () => {
  it('lists play.test, registers a zone the server then serves on its own notification, and removes it', async () => {
    const before = await staff.elevated.adminParentDomainList();
    expect(before.data.map((p) => p.name)).toContain('play.test');
    expect((await dns.ask('games.example.org', 'SOA')).rcode).toBe('REFUSED');

    const made = await staff.elevated.adminParentDomainCreate({ body: { name: ' Games.Example.ORG. ' } });
    expect(made).toMatchObject({ name: 'games.example.org' });
    // No reload() here: the notification (or the generation poll) brings the change.
    await eventually(async () => (await dns.ask('games.example.org', 'SOA')).rcode === 'NOERROR');
    expect((await dns.ask('games.example.org', 'SOA', 'tcp')).answers).toEqual([
      'SOA games.example.org ns1.hosting.test hostmaster.hosting.test',
    ]);
    expect((await dns.ask('x.games.example.org', 'A')).rcode).toBe('NXDOMAIN');
    expect((await staff.elevated.adminParentDomainList()).data.map((p) => p.name)).toEqual(
      [...before.data.map((p) => p.name), 'games.example.org'].sort(),
    );

    // The zone is the platform's: no organization may claim a name in it.
    const orgId = (
      await customer.api.organizationCreate({
        body: { name: 'Claims', slug: `claims-${Date.now().toString(36)}` },
      })
    ).id;
    expect(
      await outcome(
        customer.api.domainAdd({ path: { id: orgId }, body: { domain: 'shop.games.example.org' } }),
      ),
    ).toEqual([400, 'invalid-field-value']);
    expect(await app.sql`select 1 from domain_claims where organization_id = ${orgId}`).toHaveLength(0);

    await staff.elevated.adminParentDomainDelete({ path: { id: made.id } });
    await eventually(async () => (await dns.ask('games.example.org', 'SOA')).rcode === 'REFUSED');
    expect((await parentRows()).map((r) => r.name)).not.toContain('games.example.org');
  });

  it('refuses callers without manage_services or elevation, and names that are not zones of their own, changing nothing', async () => {
    await staff.elevated.adminParentDomainCreate({ body: { name: 'arena.example.net' } });
    const before = await parentRows();
    const create = (c: typeof staff.elevated, name: string) =>
      outcome(c.adminParentDomainCreate({ body: { name } }));
    expect(await create(customer.api, 'x.example.net')).toEqual([403, 'forbidden']);
    expect(await create(staff.plain, 'x.example.net')).toEqual([403, 'elevation-required']);
    expect(await create(otherStaff.elevated, 'x.example.net')).toEqual([403, 'forbidden']);
    expect(await outcome(customer.api.adminParentDomainList())).toEqual([403, 'forbidden']);
    expect(await create(staff.elevated, 'single')).toEqual([400, 'invalid-field-value']);
    expect(await create(staff.elevated, 'bad_label.example.net')).toEqual([400, 'invalid-field-value']);
    expect(await create(staff.elevated, '-x.example.net')).toEqual([400, 'invalid-field-value']);
    // The platform's own zone, names under it, and a zone above it.
    expect(await create(staff.elevated, 'hosting.test')).toEqual([400, 'invalid-field-value']);
    expect(await create(staff.elevated, 'games.hosting.test')).toEqual([400, 'invalid-field-value']);
    expect(await create(staff.elevated, 'test')).toEqual([400, 'invalid-field-value']);
    // Another parent domain: the same, under it, above it.
    expect(await create(staff.elevated, 'ARENA.example.net')).toEqual([409, 'hostname-taken']);
    expect(await create(staff.elevated, 'eu.arena.example.net')).toEqual([400, 'invalid-field-value']);
    expect(await create(staff.elevated, 'example.net')).toEqual([400, 'invalid-field-value']);
    const arena = before.find((r) => r.name === 'arena.example.net')!;
    expect(await outcome(customer.api.adminParentDomainDelete({ path: { id: arena.id as string } }))).toEqual(
      [403, 'forbidden'],
    );
    expect(
      await outcome(
        staff.elevated.adminParentDomainDelete({ path: { id: '00000000-0000-4000-8000-000000000000' } }),
      ),
    ).toEqual([404, 'not-found']);
    expect(await parentRows()).toEqual(before);
  });

  it('lets exactly one of two racing registrations of overlapping names through', async () => {
    const results = await Promise.all([
      outcome(staff.elevated.adminParentDomainCreate({ body: { name: 'race.example.com' } })),
      outcome(staff.elevated.adminParentDomainCreate({ body: { name: 'eu.race.example.com' } })),
    ]);
    expect(results.filter((r) => r === 'ok')).toHaveLength(1);
    expect((await parentRows()).filter((r) => (r.name as string).endsWith('race.example.com'))).toHaveLength(
      1,
    );
  });
});
