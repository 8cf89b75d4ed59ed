// Service instances with svcctl against the real server and its worker on the local substrate: services
// list | show, resources list and subscriptions resources as tables, shares add | list | remove, vps
// reinstall (--yes --wait through pipes, the y/N prompt and the progress bar on a terminal, the refusal
// without --yes and without a terminal, the Idempotency-Key that makes a rerun start nothing), operations
// show | wait (a failed one exits 7), admin subscriptions create --wait | suspend | resume, and a
// reinstall of a suspended service refused with its code.
//
// One app, one owner signed in for one saved profile, one VPS provisioned with the lead's helper; the
// tests run in order and build on each other's state, and each spawns as few svcctl processes as it can.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Staff } from '../../../test/admin-content/staff.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { newAccount } from '../../../test/support/auth.js';
import { PRODUCTS, type Provisioned } from '../../../test/support/services.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { ExitCode } from '../../src/exit-codes.js';
import { OPERATION_FAILED } from '../../src/run-services.js';
import { ensureBuilt } from '../support/build.js';
import { cliServiceOwner, type CliServiceOwner } from '../support/service-owner.js';
import { converse, hasScript } from '../support/interactive.js';
import { runCli, type CliRun } from '../support/run-cli.js';

let app: TestApp;
let smtp: TestSmtp;
let staff: Staff;
/** The owner's saved session, as `svcctl login` leaves it. */
let home: CliServiceOwner['home'];
let projectId: string;
let friend: { id: string; name: string };
let vps: Provisioned;

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  const [owner, other] = await Promise.all([
    cliServiceOwner(app, smtp, 'svc', {
      osImage: 'debian-12',
      name: 'Web box',
      project: { name: 'Servers', slug: 'servers' },
    }),
    newAccount(app, smtp, 'svc-friend'),
  ]);
  ({ home, staff, projectId, service: vps } = owner);
  friend = { id: other.session.user.id, name: other.session.user.name ?? '' };
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

const svcctl = (args: string[], run: CliRun = {}) =>
  runCli(args, { ...run, env: { ...home, SVCCTL_BASE_URL: app.baseUrl, ...run.env } });
/** As staff: the elevated session's token, nothing saved. */
const asStaff = (args: string[]) =>
  runCli(args, { env: { SVCCTL_BASE_URL: app.baseUrl, SVCCTL_TOKEN: staff.elevatedToken } });

const json = <T>(stdout: string) => JSON.parse(stdout) as T;
const operations = async (serviceId: string) =>
  app.sql<{ id: string; kind: string; status: string }[]>`
    select id, kind, status from service_operations where service_instance_id = ${serviceId} order by created_at`;
const osImage = async (resourceId: string) =>
  (await app.sql<{ os_image: string }[]>`select os_image from service_resources where id = ${resourceId}`)[0]!
    .os_image;
const lines = (text: string) => text.trimEnd().split('\n');

describe('services, resources and subscriptions', () => {
  it('services list shows the chosen columns; services show the instance', async () => {
    const [list, show] = await Promise.all([
      svcctl(['services', 'list', projectId, '-o', 'table']),
      svcctl(['services', 'show', vps.serviceInstanceId]),
    ]);
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    const [header, ...rows] = lines(list.stdout);
    expect(header).toMatch(/^ID\s+SLUG\s+NAME\s+STATUS\s+PRODUCT_ID\s+CREATED_AT$/);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(
      new RegExp(
        `^${vps.serviceInstanceId}\\s+web-box\\s+Web box\\s+running\\s+${PRODUCTS['vps-small']}\\s+\\S+Z$`,
      ),
    );
    expect(show.code, show.stderr).toBe(0);
    expect(json(show.stdout)).toMatchObject({
      id: vps.serviceInstanceId,
      project_id: projectId,
      subscription_id: vps.subscriptionId,
      status: 'running',
    });
  });

  it('resources list and subscriptions resources print the resources as rows', async () => {
    const [resources, bySubscription, asJson] = await Promise.all([
      svcctl(['resources', 'list', vps.serviceInstanceId, '-o', 'table']),
      svcctl(['subscriptions', 'resources', vps.subscriptionId, '-o', 'table']),
      svcctl(['resources', 'list', vps.serviceInstanceId]),
    ]);
    expect(resources.code, resources.stderr).toBe(0);
    const [header, ...rows] = lines(resources.stdout);
    expect(header).toMatch(/^ID\s+KIND\s+ROLE\s+STATUS\s+PRIMARY\s+HIDDEN\s+OS_IMAGE\s+CREATED_AT$/);
    expect(rows.map((r) => r.split(/\s+/).slice(0, 7))).toEqual([
      [vps.primaryResourceId, 'virtual_machine', 'primary', 'running', 'true', 'false', 'debian-12'],
      [vps.volumeResourceId, 'volume', 'storage', 'running', 'false', 'false', '-'],
    ]);
    expect(resources.stdout).not.toContain('warning');

    expect(bySubscription.code, bySubscription.stderr).toBe(0);
    expect(lines(bySubscription.stdout).slice(0, 3)).toEqual([
      `service instance Web box (web-box, ${vps.serviceInstanceId})`,
      '',
      header,
    ]);
    // JSON is the answer whole.
    expect(json(asJson.stdout)).toMatchObject({
      primary_role_is_inconsistent: false,
      resources: [{ id: vps.primaryResourceId, os_image: 'debian-12' }, { id: vps.volumeResourceId }],
    });
  });

  it('shares add, list and remove', async () => {
    const add = await svcctl(['shares', 'add', vps.serviceInstanceId, '--user-id', friend.id]);
    expect(add.code, add.stderr).toBe(0);
    expect(json(add.stdout)).toMatchObject({
      service_instance_id: vps.serviceInstanceId,
      user_id: friend.id,
    });

    const list = await svcctl(['shares', 'list', vps.serviceInstanceId, '-o', 'table']);
    expect(list.code, list.stderr).toBe(0);
    const [header, ...rows] = lines(list.stdout);
    expect(header).toMatch(/^USER_ID\s+NAME\s+SHARED_AT$/);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatch(new RegExp(`^${friend.id}\\s+${friend.name}\\s+\\S+Z$`));

    const remove = await svcctl(['shares', 'remove', vps.serviceInstanceId, friend.id]);
    expect(remove).toMatchObject({ code: 0, stdout: '', stderr: '' });
    const left =
      await app.sql`select 1 from service_shares where service_instance_id = ${vps.serviceInstanceId}`;
    expect(left).toHaveLength(0);
  });
});

describe('vps reinstall', () => {
  let reinstallId: string;
  const key = `cli-test-${randomUUID()}`;

  it('without --yes and without a terminal is a usage error, and starts nothing', async () => {
    const before = await operations(vps.serviceInstanceId);
    const r = await svcctl([
      'vps',
      'reinstall',
      vps.serviceInstanceId,
      vps.primaryResourceId,
      '--image',
      'rocky-9',
    ]);
    expect(r.code).toBe(ExitCode.usage);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('confirm it with --yes');
    expect(r.stderr).toContain('nothing was started');
    expect(await operations(vps.serviceInstanceId)).toEqual(before);
    expect(await osImage(vps.primaryResourceId)).toBe('debian-12');
  });

  it('--yes --wait through pipes: the answer on stdout, a plain line per change on stderr, exit 0', async () => {
    const r = await svcctl([
      'vps',
      'reinstall',
      vps.serviceInstanceId,
      vps.primaryResourceId,
      '--image',
      'rocky-9',
      '--yes',
      '--wait',
      '--idempotency-key',
      key,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const accepted = json<{ operation_id: string }>(r.stdout);
    expect(accepted).toEqual({
      operation_id: expect.any(String),
      os_image: 'rocky-9',
      resource_id: vps.primaryResourceId,
      service_instance_id: vps.serviceInstanceId,
    });
    reinstallId = accepted.operation_id;
    const progress = lines(r.stderr);
    // No carriage returns or escapes off a terminal; phases in order, each at most once, then the end.
    expect(r.stderr).not.toContain('\r');
    expect(r.stderr).not.toContain('\x1b');
    for (const line of progress) expect(line).toMatch(/^(queued|phase [a-z_]+ \d+%|succeeded)$/);
    // The first poll follows the 202 at once, well before the machine is rebuilt: it saw it under way.
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.at(-1)).toBe('succeeded');
    const phases = progress.filter((l) => l.startsWith('phase ')).map((l) => l.split(' ')[1]);
    const order = ['stop', 'wipe', 'install', 'vm_access', 'boot'];
    expect(phases).toEqual(order.filter((p) => phases.includes(p)));
    expect(await osImage(vps.primaryResourceId)).toBe('rocky-9');
    const ops = await operations(vps.serviceInstanceId);
    expect(ops.at(-1)).toEqual({ id: reinstallId, kind: 'reinstall', status: 'succeeded' });
  });

  it('run again with the same --idempotency-key: the first answer, and no second reinstall', async () => {
    const before = await operations(vps.serviceInstanceId);
    const r = await svcctl([
      'vps',
      'reinstall',
      vps.serviceInstanceId,
      vps.primaryResourceId,
      '--image',
      'rocky-9',
      '--yes',
      '--idempotency-key',
      key,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(json<{ operation_id: string }>(r.stdout).operation_id).toBe(reinstallId);
    expect(await operations(vps.serviceInstanceId)).toEqual(before);
  });

  it('operations show prints the operation; operations wait prints it once it ended', async () => {
    const [show, wait] = await Promise.all([
      svcctl(['operations', 'show', vps.serviceInstanceId, reinstallId]),
      svcctl(['operations', 'wait', vps.serviceInstanceId, reinstallId]),
    ]);
    expect(show.code, show.stderr).toBe(0);
    const op = json<Record<string, unknown>>(show.stdout);
    expect(op).toMatchObject({
      id: reinstallId,
      kind: 'reinstall',
      status: 'succeeded',
      phase: 'boot',
      error: null,
      completed_at: expect.any(String),
    });
    expect(wait.code, wait.stderr).toBe(0);
    expect(json(wait.stdout)).toEqual(op);
    expect(wait.stderr).toBe('succeeded\n');
  });

  it('operations list: newest first as a table; --all in json keeps the shape of one page', async () => {
    // The app's clock is frozen, so operations of one test share an instant: the id breaks the tie.
    const expected = (
      await app.sql<{ id: string; kind: string }[]>`
        select id, kind from service_operations where service_instance_id = ${vps.serviceInstanceId}
        order by created_at desc, id desc`
    ).map((r) => `${r.id} ${r.kind}`);
    expect(expected).toContain(`${reinstallId} reinstall`);
    expect(expected).toContain(`${vps.operationId} provision`);
    const [table, all] = await Promise.all([
      svcctl(['operations', 'list', vps.serviceInstanceId, '-o', 'table']),
      svcctl(['operations', 'list', vps.serviceInstanceId, '--all', '--page-size', '1']),
    ]);
    expect(table.code, table.stderr).toBe(0);
    const [header, ...rows] = lines(table.stdout);
    expect(header).toMatch(/^ID\s+KIND\s+STATUS\s+PHASE\s+PROGRESS\s+CREATED_AT\s+COMPLETED_AT\s+ERROR$/);
    expect(rows.slice(0, -2).map((r) => r.split(/\s+/).slice(0, 2).join(' '))).toEqual(expected);
    expect(rows.slice(-2)).toEqual(['', `page 1 of 1, ${expected.length} items`]);
    expect(all.code, all.stderr).toBe(0);
    const page = json<{ data: { id: string; kind: string }[]; meta: unknown }>(all.stdout);
    expect(page.data.map((o) => `${o.id} ${o.kind}`)).toEqual(expected);
    expect(page.meta).toEqual({
      page: 1,
      page_size: expected.length,
      total_items: expected.length,
      total_pages: 1,
    });
  });

  it('operations wait on a failed operation prints it and exits with the code of a failed action', async () => {
    // The substrate cannot be made to fail on demand; an operation that failed is a row like this one.
    const failedId = randomUUID();
    await app.sql`
      insert into service_operations (id, service_instance_id, resource_id, kind, status, phase, progress_percent, error, created_at, updated_at, completed_at)
      values (${failedId}, ${vps.serviceInstanceId}, ${vps.primaryResourceId}, 'reinstall', 'failed', 'install', 50,
              'The image could not be installed.', now(), now(), now())`;
    const r = await svcctl(['operations', 'wait', vps.serviceInstanceId, failedId, '-o', 'yaml']);
    expect(r.code).toBe(OPERATION_FAILED);
    expect(r.stdout).toContain(`id: ${failedId}\n`);
    expect(r.stdout).toContain('status: failed\n');
    expect(lines(r.stderr)).toEqual([
      'failed',
      `error: operation ${failedId} failed in phase install: The image could not be installed.`,
    ]);
    await app.sql`delete from service_operations where id = ${failedId}`;
  });

  it.skipIf(!hasScript)('on a terminal: asks y/N, then draws one progress bar in place', async () => {
    const before = (await operations(vps.serviceInstanceId)).length;
    const run = converse(
      ['vps', 'reinstall', vps.serviceInstanceId, vps.primaryResourceId, '--image', 'ubuntu-24.04', '--wait'],
      { env: { ...home, SVCCTL_BASE_URL: app.baseUrl }, terminal: true },
    );
    await run.waitFor(
      `Reinstall ${vps.primaryResourceId} with ubuntu-24.04? All data on it is erased [y/N] `,
    );
    expect((await operations(vps.serviceInstanceId)).length).toBe(before);
    run.type('y\r');
    expect(await run.exit).toBe(0);
    const output = run.output();
    // Redrawn in place: erase-line sequences, a bar with its percent, and the finished bar at 100%.
    expect(output).toContain('\r\x1b[2K[');
    expect(output).toMatch(/\[#{24}\] 100% {2}succeeded\n/);
    expect(output).not.toMatch(/^phase /m);
    expect(await osImage(vps.primaryResourceId)).toBe('ubuntu-24.04');
    expect((await operations(vps.serviceInstanceId)).length).toBe(before + 1);
  });
});

describe('admin subscriptions', () => {
  it('suspend: a reinstall is then refused with its code, nothing started; resume lets it through again', async () => {
    const suspend = await asStaff(['admin', 'subscriptions', 'suspend', vps.subscriptionId]);
    expect(suspend.code, suspend.stderr).toBe(0);
    expect(json(suspend.stdout)).toMatchObject({ id: vps.subscriptionId, status: 'suspended' });

    const before = await operations(vps.serviceInstanceId);
    const refused = await svcctl([
      'vps',
      'reinstall',
      vps.serviceInstanceId,
      vps.primaryResourceId,
      '--image',
      'debian-12',
      '--yes',
      '--wait',
    ]);
    expect(refused.code).toBe(ExitCode.conflict);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^ {2}code: +subscription-not-serviceable$/m);
    expect(await operations(vps.serviceInstanceId)).toEqual(before);

    const resume = await asStaff(['admin', 'subscriptions', 'resume', vps.subscriptionId]);
    expect(resume.code, resume.stderr).toBe(0);
    expect(json(resume.stdout)).toMatchObject({ id: vps.subscriptionId, status: 'active' });
    const [row] = await app.sql<
      { status: string }[]
    >`select status from subscriptions where id = ${vps.subscriptionId}`;
    expect(row!.status).toBe('active');
  });

  it('create --wait provisions a service and follows its operation; end ends it', async () => {
    const r = await asStaff([
      'admin',
      'subscriptions',
      'create',
      '--project-id',
      projectId,
      '--product-id',
      PRODUCTS['web-app'],
      '--name',
      'Shop',
      '--wait',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const created = json<{ subscription_id: string; service_instance_id: string; operation_id: string }>(
      r.stdout,
    );
    expect(lines(r.stderr).at(-1)).toBe('succeeded');
    const [service] = await app.sql<{ status: string }[]>`
      select status from service_instances where id = ${created.service_instance_id}`;
    expect(service!.status).toBe('running');
    // An Idempotency-Key went with it, though none was given: a new random one, kept with the (sealed)
    // answer. The staff's newest key is this request's: --wait only polls (GETs carry none).
    const keys = await app.sql<{ key: string; status: number }[]>`
      select key, status from idempotency_keys
      where caller = ${`user:${staff.id}`} order by created_at desc limit 1`;
    expect(keys).toEqual([
      {
        key: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        status: 202,
      },
    ]);

    const end = await asStaff(['admin', 'subscriptions', 'end', created.subscription_id]);
    expect(end.code, end.stderr).toBe(0);
    expect(json(end.stdout)).toMatchObject({ id: created.subscription_id, status: 'ended' });
  });
});

describe('power', () => {
  it('stop --wait and start --wait follow their operations; the service reads stopped, then running', async () => {
    const stop = await svcctl(['power', 'stop', vps.serviceInstanceId, '--wait']);
    expect(stop.code, stop.stderr).toBe(0);
    expect(json(stop.stdout)).toEqual({
      operation_id: expect.any(String),
      service_instance_id: vps.serviceInstanceId,
      action: 'stop',
    });
    expect(lines(stop.stderr)).toEqual(expect.arrayContaining(['succeeded']));
    const status = async () =>
      (
        await app.sql<
          { status: string }[]
        >`select status from service_instances where id = ${vps.serviceInstanceId}`
      )[0]!.status;
    expect(await status()).toBe('stopped');
    expect((await app.substrate!.unitStatus(vps.primaryResourceId)).state).toBe('stopped');

    const start = await svcctl(['power', 'start', vps.serviceInstanceId, '--wait', '-o', 'yaml']);
    expect(start.code, start.stderr).toBe(0);
    expect(start.stdout).toMatch(/^action: start$/m);
    expect(lines(start.stderr).at(-1)).toBe('succeeded');
    expect(await status()).toBe('running');
    expect((await app.substrate!.unitStatus(vps.primaryResourceId)).state).toBe('running');
  });
});
