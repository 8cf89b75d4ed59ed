// Schedules with svcctl against the real server: create from flags, list as a table with the next run in
// the local time zone (TZ), update --no-enabled, a refused cron exiting with its code and changing
// nothing, delete.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { cliServiceOwner, type CliServiceOwner } from '../support/service-owner.js';

let app: TestApp;
let smtp: TestSmtp;
let owner: CliServiceOwner;

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  app.clock.set(new Date());
  owner = await cliServiceOwner(app, smtp, 'sc-cli', { productSlug: 'web-app', name: 'Shop' });
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

const service = () => owner.service.serviceInstanceId;
const rows = () => app.sql`select id, name, enabled, next_run_at from service_schedules order by id`;

describe('svcctl schedules', () => {
  let id: string;

  it('create takes the schedule from flags; list -o table shows the next run in local time', async () => {
    const r = await owner.svcctl([
      'schedules',
      'create',
      service(),
      '--name',
      'nightly backup',
      '--cron',
      '30 2 * * *',
      '--timezone',
      'Europe/Berlin',
      '--action',
      'backup',
      '--keep',
      '3',
      '-o',
      'json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const made = JSON.parse(r.stdout) as { id: string; next_run_at: string; keep: number };
    expect(made).toMatchObject({ keep: 3, next_run_at: expect.stringMatching(/T0[01]:30:00\.000Z$/) });
    id = made.id;

    const table = await owner.svcctl(['schedules', 'list', service(), '-o', 'table'], {
      env: { TZ: 'America/New_York' },
    });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain('NEXT_RUN (LOCAL)');
    expect(table.stdout).toContain('backup (keep 3)');
    // 02:30 in Berlin is 20:30 (EST) or 21:30 (EDT) the evening before in New York.
    expect(table.stdout).toMatch(/\d{4}-\d\d-\d\d (20|21):30 E[SD]T/);
    expect(table.stdout.trimEnd().split('\n').at(-1)).toBe('1 of 10 schedules');
  });

  it('update --no-enabled leaves no next run; a six-field cron refused exits 5 (invalid) and changes nothing', async () => {
    const off = await owner.svcctl(['schedules', 'update', service(), id, '--no-enabled', '-o', 'json']);
    expect(off.code, off.stderr).toBe(0);
    expect(JSON.parse(off.stdout)).toMatchObject({ enabled: false, next_run_at: null });
    const before = await rows();
    const bad = await owner.svcctl(['schedules', 'update', service(), id, '--cron', '* * * * * *']);
    expect(bad.code).toBe(ExitCode.invalid);
    expect(bad.stderr).toContain('invalid-field-value');
    expect(await rows()).toEqual(before);
  });

  it('delete removes it', async () => {
    const r = await owner.svcctl(['schedules', 'delete', service(), id]);
    expect(r.code, r.stderr).toBe(0);
    expect(await rows()).toEqual([]);
  });
});
