// Provisionings into one project at once (issue 24's bench: 50 in parallel, all accepted). Each request's
// transaction claims its own slug and port without waiting for another's, holds the project only against
// its deletion, and bumps the edge's and DNS's generations at commit, so no request waits for another's
// whole transaction. A loaded machine, where each transaction takes long, is made here by a trigger the
// test adds: every provisioning's audit entry (its transaction's last statement, with all it holds
// held) takes SLOW_MS. Queued one behind another, the last would wait PARALLEL x SLOW_MS, past
// DB_TIMEOUT_MS, and be refused 503; side by side they all finish in a few SLOW_MS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SvcApiError } from '../../sdk/src/index.js';
import type { Staff } from '../admin-content/staff.js';
import type { Caller } from '../support/organizations.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { PRODUCTS, serviceCustomer } from '../support/services.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

const PARALLEL = 50;
const SLOW_MS = 200;

let app: TestApp;
let smtp: TestSmtp;
let staff: Staff;
let projectId: string;
let owner: Caller;
let orgId: string;

beforeAll(async () => {
  smtp = await startTestSmtp();
  // main.ts's pool size, and a wait bound short enough that requests queued behind each other's whole
  // transactions would pass it, long enough for a loaded machine's pool queue.
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', DB_TIMEOUT_MS: '4000' },
    dbPoolMax: 20,
  });
  ({ staff, owner, orgId, projectId } = await serviceCustomer(app, smtp, 'parallel'));
  // The sign-in mail needed the worker; from here what is measured is the API's transaction, not the
  // substrate's work, so the provisionings stay queued.
  await app.worker?.stop();
  await app.sql.unsafe(`
    create function test_slow_provisioning() returns trigger language plpgsql as $$
    begin
      if new.action = 'subscription.activated' then perform pg_sleep(${SLOW_MS / 1000}); end if;
      return new;
    end $$;
    create trigger test_slow_provisioning before insert on audit_entries
      for each row execute function test_slow_provisioning();`);
});
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

describe('provisionings into one project at once', () => {
  it(`accepts ${PARALLEL} at once, each with its own slug and port, none refused for waiting`, async () => {
    const answers = await Promise.all(
      Array.from({ length: PARALLEL }, () =>
        staff.elevated
          .adminSubscriptionCreate(
            { body: { project_id: projectId, product_id: PRODUCTS['block-game'], name: 'Shop' } },
            { retries: 0 },
          )
          .then(
            (made) => ({ made }),
            (err: unknown) => ({ status: err instanceof SvcApiError ? err.status : String(err) }),
          ),
      ),
    );
    const refused = answers.filter((a) => !('made' in a));
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
    const provisioning = staff.elevated.adminSubscriptionCreate({
      body: { project_id: project.id, product_id: PRODUCTS['web-app'], name: 'Racer' },
    });
    // Its transaction is in its last statement, holding the project, when the deletion starts.
    for (;;) {
      const [busy] = await app.sql<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity where wait_event = 'PgSleep'`;
      if (busy!.n > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const deletion = await owner.api.projectDelete({ path: { id: project.id } }).then(
      () => 'deleted',
      (err: unknown) => (err instanceof SvcApiError ? err.code : String(err)),
    );
    const made = await provisioning;
    expect(deletion).toBe('project-has-subscriptions');
    const [row] = await app.sql<{ n: number }[]>`
      select count(*)::int as n from service_instances s join projects p on p.id = s.project_id
      where s.id = ${made.service_instance_id}`;
    expect(row!.n).toBe(1);
  });
});
