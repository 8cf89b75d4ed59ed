// Provisionings into one project at once (issue 24's bench posts 50 at once; all must be accepted). Each
// request's transaction claims its own slug and port without waiting for another's, holds the project
// only against its deletion, and bumps the edge's and DNS's generations at commit, so no request waits
// for another's whole transaction. Shown without timing: a trigger the test adds parks every
// provisioning in its transaction's last statement (its audit entry), with all it holds held, until the
// test lets go; all PARALLEL must get there at once. Queued one behind another, only one could.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SvcApiError } from '../../sdk/src/index.js';
import { connect, type Sql } from '../../server/src/db/client.js';
import type { Staff } from '../admin-content/staff.js';
import type { Caller } from '../support/organizations.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { randomPortPool } from '../support/edge.js';
import { PRODUCTS, serviceCustomer } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

// As many as main.ts's pool has connections: the pool's own queue is not what is tested.
const PARALLEL = 20;
/** The advisory lock the test holds and parked provisionings wait for. */
const GATE = 724_242;

let app: TestApp;
let smtp: TestSmtp;
let staff: Staff;
let owner: Caller;
let orgId: string;
let projectId: string;
/** The test's own connections: the app's pool is all taken by the provisionings. */
let watch: Sql;

beforeAll(async () => {
  smtp = await startTestSmtp();
  // A pool of 400 ports: 20 draws at once often draw the same port, which must be passed over (another
  // transaction is taking it), not waited for.
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PORT_POOL: randomPortPool(400) },
    dbPoolMax: 20,
  });
  ({ staff, owner, orgId, projectId } = await serviceCustomer(app, smtp, 'parallel'));
  // The sign-in mail needed the worker; from here what is tested is the API's transaction, not the
  // substrate's work, so the provisionings stay queued.
  await app.worker?.stop();
  watch = connect(app.databaseUrl, { max: 3 });
  await watch.unsafe(`
    create function test_park_provisioning() returns trigger language plpgsql as $$
    begin
      if new.action = 'subscription.activated' then perform pg_advisory_xact_lock_shared(${GATE}); end if;
      return new;
    end $$;
    create trigger test_park_provisioning before insert on audit_entries
      for each row execute function test_park_provisioning();`);
});
afterAll(async () => {
  await watch?.end();
  await app?.close();
  await smtp?.close();
});

/** Holds the gate shut until `open()`. */
async function shutGate() {
  const holder = await watch.reserve();
  await holder`select pg_advisory_lock(${GATE})`;
  return {
    async open() {
      await holder`select pg_advisory_unlock(${GATE})`;
      holder.release();
    },
  };
}

/** Waits until `count` sessions are parked at the gate, or says how many got there. */
async function parked(count: number): Promise<void> {
  for (const deadline = Date.now() + 60_000; ; ) {
    const [row] = await watch<{ n: number }[]>`
      select count(*)::int as n from pg_locks
      where locktype = 'advisory' and classid = 0 and objid = ${GATE} and not granted`;
    if (row!.n >= count) return;
    if (Date.now() > deadline) throw new Error(`${row!.n} of ${count} provisionings reached the gate`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const statusOf = (err: unknown) => (err instanceof SvcApiError ? err.status : String(err));

describe('provisionings into one project at once', () => {
  it(`has ${PARALLEL} in their transactions at once, each with its own slug and port`, async () => {
    const gate = await shutGate();
    const answers = Array.from({ length: PARALLEL }, () =>
      staff.elevated
        .adminSubscriptionCreate(
          { body: { project_id: projectId, product_id: PRODUCTS['block-game'], name: 'Shop' } },
          { retries: 0 },
        )
        .then(
          (made) => ({ made }),
          (err: unknown) => ({ status: statusOf(err) }),
        ),
    );
    try {
      await parked(PARALLEL);
    } finally {
      await gate.open();
    }
    const refused = (await Promise.all(answers)).filter((a) => !('made' in a));
    expect(refused).toEqual([]);
    const services = await app.sql<{ slug: string }[]>`
      select slug from service_instances where project_id = ${projectId} order by slug`;
    const expected = ['shop', ...Array.from({ length: PARALLEL - 1 }, (_, i) => `shop-${i + 2}`)].sort();
    expect(services.map((s) => s.slug)).toEqual(expected);
    const [ports] = await app.sql<{ n: number; distinct_ports: number }[]>`
      select count(*)::int as n, count(distinct external_port)::int as distinct_ports
      from port_allocations a join service_instances s on s.id = a.service_instance_id
      where s.project_id = ${projectId}`;
    expect(ports).toEqual({ n: PARALLEL, distinct_ports: PARALLEL });
  });

  it('a project deleted while a provisioning into it is under way waits for it, then refuses', async () => {
    const project = await owner.api.projectCreate({ path: { id: orgId }, body: { name: 'Racing', slug: 'racing' } });
    const gate = await shutGate();
    const provisioning = staff.elevated.adminSubscriptionCreate({
      body: { project_id: project.id, product_id: PRODUCTS['web-app'], name: 'Racer' },
    });
    let deletion: Promise<string>;
    try {
      // The provisioning's transaction is in its last statement, holding the project.
      await parked(1);
      deletion = owner.api.projectDelete({ path: { id: project.id } }).then(
        () => 'deleted',
        (err: unknown) => (err instanceof SvcApiError ? err.code : String(err)),
      );
      // The deletion waits for the project's row.
      for (const deadline = Date.now() + 60_000; ; ) {
        const [row] = await watch<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
          where wait_event_type = 'Lock' and wait_event in ('tuple', 'transactionid')`;
        if (row!.n > 0) break;
        if (Date.now() > deadline) throw new Error('the deletion never waited for the provisioning');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    } finally {
      await gate.open();
    }
    const made = await provisioning;
    expect(await deletion).toBe('project-has-subscriptions');
    const [row] = await app.sql<{ n: number }[]>`
      select count(*)::int as n from service_instances s join projects p on p.id = s.project_id
      where s.id = ${made.service_instance_id}`;
    expect(row!.n).toBe(1);
  });
});
