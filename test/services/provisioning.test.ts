// POST /admin/subscriptions and the subscription's lifecycle (DECISIONS.md §4 "provisioning", "service
// end"), end to end: the operation runs on the app's worker against its local substrate, where the
// volume, the machine and its contract are real, and succeeds when the unit's agent acknowledges.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember, type Staff } from '../admin-content/staff.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { auditEntries, signedIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { awaitOperation, PRODUCTS, provisionService, type Provisioned } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let staff: Staff;
let owner: Caller;
let orgId: string;
let projectId: string;
let vps: Provisioned;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  staff = await staffMember(app, smtp, 'svc-staff', ['manage_services']);
  owner = await signedIn(app, smtp, 'svc-owner');
  orgId = (
    await owner.api.organizationCreate({
      body: { name: 'Hosting', slug: `hosting-${Date.now().toString(36)}` },
    })
  ).id;
  projectId = (await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Prod', slug: 'prod' } }))
    .id;
  vps = await provisionService(staff.elevated, { projectId, name: 'Web server' });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

/** Every row provisioning writes, to show a refusal wrote none. */
async function provisioningRows(): Promise<number> {
  const [row] = await app.sql<{ n: number }[]>`
    select (select count(*) from subscriptions)::int + (select count(*) from service_instances)::int
         + (select count(*) from service_resources)::int + (select count(*) from service_operations)::int
         + (select count(*) from idempotency_keys)::int as n`;
  return row!.n;
}

describe('provisioning a VPS', () => {
  it('makes a running service with its machine and volume, the default image installed', async () => {
    expect(vps.operation).toMatchObject({
      kind: 'provision',
      status: 'succeeded',
      progress_percent: 100,
      error: null,
    });
    const service = await owner.api.serviceInstanceGet({ path: { id: vps.serviceInstanceId } });
    expect(service).toMatchObject({
      name: 'Web server',
      slug: 'web-server',
      project_id: projectId,
      subscription_id: vps.subscriptionId,
      product_id: PRODUCTS['vps-small'],
      status: 'running',
    });
    const list = await owner.api.serviceInstanceResourceList({ path: { id: vps.serviceInstanceId } });
    expect(list.primary_role_is_inconsistent).toBe(false);
    expect(list.resources).toEqual([
      expect.objectContaining({
        kind: 'virtual_machine',
        role: 'primary',
        status: 'running',
        is_declared_primary: true,
        os_image: 'debian-12',
      }),
      expect.objectContaining({
        kind: 'volume',
        role: 'storage',
        status: 'running',
        is_declared_primary: false,
        os_image: null,
      }),
    ]);
    expect(await owner.api.serviceInstanceList({ path: { id: projectId } })).toEqual([service]);
  });

  it('runs the machine on the substrate with the image on its volume and an acknowledged contract', async () => {
    const substrate = app.substrate!;
    expect(await substrate.installedImage(vps.volumeResourceId)).toBe('debian-12');
    const status = await substrate.unitStatus(vps.primaryResourceId);
    const [row] = await app.sql<{ signal_generation: string; observed_generation: string }[]>`
      select signal_generation, observed_generation from service_resources where id = ${vps.primaryResourceId}`;
    expect(status.state).toBe('running');
    expect(Number(row!.signal_generation)).toBeGreaterThanOrEqual(1);
    expect(status.observedGeneration).toBe(Number(row!.signal_generation));
    expect(row!.observed_generation).toBe(row!.signal_generation);
    const contract = await substrate.readUnitSignal(vps.primaryResourceId);
    expect(contract).toMatchObject({
      unitId: vps.primaryResourceId,
      contractVersion: 1,
      generation: Number(row!.signal_generation),
    });
    expect(contract!.publicEndpoints).toEqual([
      expect.objectContaining({
        protocols: ['tcp'],
        internal_port: 22,
        address: expect.stringMatching(/^web-server-/),
      }),
    ]);
  });

  it("audits subscription.activated in the project's organization, and prices the subscription", async () => {
    const entries = await auditEntries(app, orgId);
    expect(entries.find((e) => e.action === 'subscription.activated')).toMatchObject({
      actor_user_id: staff.id,
      target_id: vps.subscriptionId,
    });
    const [sub] =
      await app.sql`select status, price::text, currency from subscriptions where id = ${vps.subscriptionId}`;
    expect(sub).toEqual({ status: 'active', price: '6.50', currency: 'EUR' });
  });

  it("counts in the project's stats: one live subscription, charged for its window", async () => {
    const stats = await owner.api.projectStatsGet({ path: { id: projectId } });
    expect(stats.resource_count).toBeGreaterThanOrEqual(1);
    expect(stats.cycle_spend).toEqual([expect.objectContaining({ currency: 'EUR' })]);
  });

  it('starts a unit that should run and does not again (reconcile_units, as a node after a restart)', async () => {
    await app.substrate!.stopUnit(vps.primaryResourceId);
    expect((await app.substrate!.unitStatus(vps.primaryResourceId)).state).toBe('stopped');
    await app.worker!.run('reconcile_units');
    expect((await app.substrate!.unitStatus(vps.primaryResourceId)).state).toBe('running');
  });

  it("lists the subscription's resources with the service instance summary", async () => {
    const list = await owner.api.subscriptionResourceList({ path: { id: vps.subscriptionId } });
    expect(list.service_instance).toEqual({
      id: vps.serviceInstanceId,
      name: 'Web server',
      slug: 'web-server',
    });
    expect(list.resources.map((r) => r.kind)).toEqual(['virtual_machine', 'volume']);
  });

  it("adds a paid image's fee to the price, and gives a second service of the same name its own slug", async () => {
    const created = await staff.elevated.adminSubscriptionCreate({
      body: {
        project_id: projectId,
        product_id: PRODUCTS['vps-small'],
        name: 'Web server',
        os_image: 'windows-server-2022',
      },
    });
    const [sub] = await app.sql`select price::text from subscriptions where id = ${created.subscription_id}`;
    expect(sub).toEqual({ price: '21.50' });
    const service = await owner.api.serviceInstanceGet({ path: { id: created.service_instance_id } });
    expect(service.slug).toBe('web-server-2');
    expect(
      (await awaitOperation(staff.elevated, created.service_instance_id, created.operation_id)).status,
    ).toBe('succeeded');
  });

  it("leaves colour codes out of a name's slug (DECISIONS.md §8)", async () => {
    const quake = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: '^1Rocket ^7Arena' });
    const minecraft = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: '§aGreen &eHills' });
    const slugs = await Promise.all(
      [quake, minecraft].map(async (p) => (await owner.api.serviceInstanceGet({ path: { id: p.serviceInstanceId } })).slug),
    );
    expect(slugs).toEqual(['rocket-arena', 'green-hills']);
  });

  it('provisions a workload product without an image', async () => {
    const web = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Site' });
    const list = await owner.api.serviceInstanceResourceList({ path: { id: web.serviceInstanceId } });
    expect(list.resources).toEqual([
      expect.objectContaining({
        kind: 'workload',
        role: 'primary',
        is_declared_primary: true,
        os_image: null,
      }),
      expect.objectContaining({ kind: 'volume', role: 'storage' }),
    ]);
    expect((await app.substrate!.unitStatus(web.primaryResourceId)).state).toBe('running');
  });

  // Issue 17, defect 5: each product's contract names what its own program answers on.
  it.each([
    ['web-app', [{ protocols: ['http'], internal_port: 8080 }]],
    ['arena-game', [{ protocols: ['udp'], internal_port: 27960 }]],
    ['block-game', [{ protocols: ['tcp'], internal_port: 25565 }]],
  ] as const)('gives a %s unit the endpoints of its product', async (productSlug, want) => {
    const s = await provisionService(staff.elevated, { projectId, productSlug, name: `Ends ${productSlug}` });
    const contract = await app.substrate!.readUnitSignal(s.primaryResourceId);
    expect(contract!.publicEndpoints).toEqual(
      want.map((e) => ({
        ...e,
        address: expect.stringMatching(/^ends-[a-z-]+-[0-9a-f]{8}\.platform\.local$/),
      })),
    );
  });
});

describe('refusals change nothing', () => {
  const body = (over: Record<string, unknown> = {}) => ({
    project_id: projectId,
    product_id: PRODUCTS['vps-small'],
    name: 'Refused',
    ...over,
  });
  it.each([
    ['an unknown project', () => body({ project_id: randomUUID() }), [404, 'not-found']],
    ['an unknown product', () => body({ product_id: randomUUID() }), [404, 'not-found']],
    ['a disabled image', () => body({ os_image: 'debian-11' }), [400, 'invalid-field-value']],
    [
      'an image the plan cannot run',
      () => body({ os_image: 'ubuntu-24.04-desktop' }),
      [400, 'invalid-field-value'],
    ],
    ['an image of no product', () => body({ os_image: 'plan9' }), [400, 'invalid-field-value']],
    [
      'an image for a workload product',
      () => body({ product_id: PRODUCTS['web-app'], os_image: 'debian-12' }),
      [400, 'invalid-field-value'],
    ],
    ['a blank name', () => body({ name: '   ' }), [400, 'invalid-request']],
  ] as const)('%s', async (_name, make, want) => {
    const before = await provisioningRows();
    expect(await outcome(staff.elevated.adminSubscriptionCreate({ body: make() as never }))).toEqual(want);
    expect(await provisioningRows()).toBe(before);
  });

  it('needs manage_services (403 forbidden) and an elevated session (403 elevation-required)', async () => {
    const other = await staffMember(app, smtp, 'svc-other', ['manage_users', 'manage_billing']);
    const before = await provisioningRows();
    expect(await outcome(other.elevated.adminSubscriptionCreate({ body: body() }))).toEqual([
      403,
      'forbidden',
    ]);
    expect(await outcome(staff.plain.adminSubscriptionCreate({ body: body() }))).toEqual([
      403,
      'elevation-required',
    ]);
    // No system permission at all: forbidden, never asked to elevate (DECISIONS.md §4).
    expect(await outcome(owner.api.adminSubscriptionCreate({ body: body() }))).toEqual([403, 'forbidden']);
    expect(await provisioningRows()).toBe(before);
  });
});

describe('Idempotency-Key', () => {
  it('answers the first answer again and provisions once, also for concurrent retries', async () => {
    const key = randomUUID();
    const send = () =>
      staff.elevated.adminSubscriptionCreate({
        header: { 'Idempotency-Key': key },
        body: { project_id: projectId, product_id: PRODUCTS['arena-game'], name: 'Arena' },
      });
    const answers = await Promise.all([send(), send(), send(), send()]);
    console.log(
      await app.sql`select body::text, pg_typeof(body)::text from idempotency_keys where key = ${key}`,
      answers.map((a) => JSON.stringify(a)),
    );
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    const [{ n }] = await app.sql<[{ n: number }]>`
      select count(*)::int as n from service_instances where project_id = ${projectId} and name = 'Arena'`;
    expect(n).toBe(1);
    expect(await send()).toEqual(answers[0]);
    await awaitOperation(staff.elevated, answers[0]!.service_instance_id, answers[0]!.operation_id);
  });

  it('refuses the same key with another body (422 idempotency-key-reused), starting nothing', async () => {
    const key = randomUUID();
    await staff.elevated.adminSubscriptionCreate({
      header: { 'Idempotency-Key': key },
      body: { project_id: projectId, product_id: PRODUCTS['arena-game'], name: 'Arena two' },
    });
    const before = await provisioningRows();
    expect(
      await outcome(
        staff.elevated.adminSubscriptionCreate({
          header: { 'Idempotency-Key': key },
          body: { project_id: projectId, product_id: PRODUCTS['arena-game'], name: 'Arena three' },
        }),
      ),
    ).toEqual([422, 'idempotency-key-reused']);
    expect(await provisioningRows()).toBe(before);
  });

  it("keeps a refused request's key free, and forgets a key after 24 hours", async () => {
    const key = randomUUID();
    const send = (name: string, product: string = PRODUCTS['arena-game']) =>
      staff.elevated.adminSubscriptionCreate({
        header: { 'Idempotency-Key': key },
        body: { project_id: projectId, product_id: product, name },
      });
    expect(await outcome(send('Nope', randomUUID()))).toEqual([404, 'not-found']);
    const first = await send('Later');
    // 24 hours on (the key's row dated back: the app's clock also ends sessions).
    await app.sql`update idempotency_keys set created_at = created_at - interval '24 hours' where key = ${key}`;
    const second = await send('Later again');
    expect(second.subscription_id).not.toBe(first.subscription_id);
  });
});

describe('suspend, resume, end', () => {
  it('suspends (the unit stops, a reinstall is refused), resumes (it runs again) and ends for good', async () => {
    const s = await provisionService(staff.elevated, { projectId, name: 'Lifecycle' });
    const path = { id: s.subscriptionId };
    expect(await staff.elevated.adminSubscriptionSuspend({ path })).toMatchObject({
      status: 'suspended',
      service_instance_id: s.serviceInstanceId,
    });
    expect(await staff.elevated.adminSubscriptionSuspend({ path })).toMatchObject({ status: 'suspended' });
    await app.worker!.runDue();
    expect((await app.substrate!.unitStatus(s.primaryResourceId)).state).toBe('stopped');
    // The contract says why (generation bumped): a unit being stopped drains.
    const suspended = await app.substrate!.readUnitSignal(s.primaryResourceId);
    expect(suspended!.draining).toBe('stop');
    expect((await owner.api.serviceInstanceGet({ path: { id: s.serviceInstanceId } })).status).toBe(
      'suspended',
    );
    // The resources say what the units do now (issue 17, defect 6), the volume with its unit (§8).
    const statuses = async () =>
      Object.fromEntries(
        (await owner.api.serviceInstanceResourceList({ path: { id: s.serviceInstanceId } })).resources.map(
          (r) => [r.kind, r.status],
        ),
      );
    expect(await statuses()).toEqual({ virtual_machine: 'stopped', volume: 'stopped' });
    expect(
      await outcome(
        owner.api.vpsReinstall({
          path: { id: s.serviceInstanceId, resource_id: s.primaryResourceId },
          body: { confirm: true, os_image: 'debian-12' },
        }),
      ),
    ).toEqual([422, 'subscription-not-serviceable']);

    expect(await staff.elevated.adminSubscriptionResume({ path })).toMatchObject({ status: 'active' });
    await app.worker!.runDue();
    expect((await app.substrate!.unitStatus(s.primaryResourceId)).state).toBe('running');
    const resumed = await app.substrate!.readUnitSignal(s.primaryResourceId);
    expect(resumed!.draining).toBe(false);
    expect(resumed!.generation).toBeGreaterThan(suspended!.generation);
    expect((await owner.api.serviceInstanceGet({ path: { id: s.serviceInstanceId } })).status).toBe(
      'running',
    );
    expect(await statuses()).toEqual({ virtual_machine: 'running', volume: 'running' });

    expect(await staff.elevated.adminSubscriptionEnd({ path })).toMatchObject({ status: 'ended' });
    await app.worker!.runDue();
    expect((await app.substrate!.unitStatus(s.primaryResourceId)).state).toBe('absent');
    expect((await owner.api.serviceInstanceGet({ path: { id: s.serviceInstanceId } })).status).toBe('ended');
    expect(
      (await owner.api.serviceInstanceResourceList({ path: { id: s.serviceInstanceId } })).resources,
    ).toEqual([]);
    expect(await outcome(staff.elevated.adminSubscriptionResume({ path }))).toEqual([
      422,
      'subscription-ended',
    ]);
    expect(await outcome(staff.elevated.adminSubscriptionSuspend({ path }))).toEqual([
      422,
      'subscription-ended',
    ]);
    const actions = (await auditEntries(app, orgId)).map((e) => e.action);
    expect(actions).toEqual(
      expect.arrayContaining(['subscription.suspended', 'subscription.resumed', 'subscription.ended']),
    );
  });

  it('answers 404 for an unknown subscription', async () => {
    expect(await outcome(staff.elevated.adminSubscriptionEnd({ path: { id: randomUUID() } }))).toEqual([
      404,
      'not-found',
    ]);
  });
});
