// Backups with svcctl against the real server and its worker on the local substrate: backups create
// --wait (a plain line per change through pipes), list as a table, restore refused without --yes and
// without a terminal, restore on a terminal asking y/N (no starts nothing), restore --yes --wait showing
// the restore's phases and the volume reverted, delete, and a refusal exiting with its code.
//
// One app, one owner signed in for one saved profile, one web app provisioned with the lead's helper; the
// tests run in order and build on each other's state.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { type Provisioned } from '../../../test/support/services.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { cliServiceOwner, type CliServiceOwner } from '../support/service-owner.js';
import { converse, hasScript } from '../support/interactive.js';

let app: TestApp;
let smtp: TestSmtp;
let home: CliServiceOwner['home'];
let svcctl: CliServiceOwner['svcctl'];
let site: Provisioned;

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  const owner = await cliServiceOwner(app, smtp, 'bk-cli', { productSlug: 'web-app', name: 'Shop' });
  ({ home, svcctl } = owner);
  site = owner.service;
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

const json = <T>(stdout: string) => JSON.parse(stdout) as T;
const lines = (text: string) => text.trimEnd().split('\n');
const page = () => join(app.substrateDir, 'volumes', site.volumeResourceId, 'index.html');
const rows = async () =>
  app.sql<{ id: string; status: string }[]>`
    select id, status from service_backups where service_instance_id = ${site.serviceInstanceId} order by id`;
const operations = async () =>
  app.sql<{ id: string; kind: string; status: string }[]>`
    select id, kind, status from service_operations where service_instance_id = ${site.serviceInstanceId} order by created_at`;

interface Accepted {
  backup: { id: string; name: string; status: string };
  operation_id: string;
}

describe('svcctl backups', () => {
  let backupId: string;

  it('create --name --wait: the accepted backup on stdout, a line per change on stderr; list shows it ready', async () => {
    await writeFile(page(), 'version 1');
    const r = await svcctl([
      'backups',
      'create',
      site.serviceInstanceId,
      site.volumeResourceId,
      '--name',
      'before launch',
      '--wait',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const accepted = json<Accepted>(r.stdout);
    expect(accepted.backup).toMatchObject({ name: 'before launch', status: 'creating' });
    backupId = accepted.backup.id;
    const progress = lines(r.stderr);
    for (const line of progress) expect(line).toMatch(/^(queued|phase snapshot \d+%|succeeded)$/);
    expect(progress.at(-1)).toBe('succeeded');

    const list = await svcctl([
      'backups',
      'list',
      site.serviceInstanceId,
      site.volumeResourceId,
      '-o',
      'table',
    ]);
    expect(list.code, list.stderr).toBe(0);
    const [header, row, , used] = lines(list.stdout);
    expect(header).toMatch(/^ID\s+NAME\s+STATUS\s+RESTORE_PHASE\s+SIZE_BYTES\s+CREATED_AT\s+COMPLETED_AT$/);
    expect(row).toMatch(new RegExp(`^${backupId}\\s+before launch\\s+ready\\s+-\\s+\\d+\\s+\\S+Z\\s+\\S+Z$`));
    expect(used).toBe('1 of 5 backups');
    const asJson = await svcctl(['backups', 'list', site.serviceInstanceId, site.volumeResourceId]);
    expect(json(asJson.stdout)).toMatchObject({
      max_backups: 5,
      backups: [{ id: backupId, status: 'ready', size_bytes: expect.any(Number) }],
    });
  });

  it('restore without --yes and without a terminal is a usage error, and starts nothing', async () => {
    const before = [await rows(), await operations()];
    const r = await svcctl(['backups', 'restore', site.serviceInstanceId, site.volumeResourceId, backupId]);
    expect(r.code).toBe(ExitCode.usage);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('confirm it with --yes');
    expect(r.stderr).toContain('nothing was started');
    expect([await rows(), await operations()]).toEqual(before);
  });

  it.skipIf(!hasScript)('on a terminal: asks y/N; no starts nothing', async () => {
    const before = [await rows(), await operations()];
    const run = converse(['backups', 'restore', site.serviceInstanceId, site.volumeResourceId, backupId], {
      env: { ...home, SVCCTL_BASE_URL: app.baseUrl },
      terminal: true,
    });
    await run.waitFor(`Restore backup ${backupId} onto volume ${site.volumeResourceId}?`);
    run.type('n\r');
    expect(await run.exit).toBe(ExitCode.usage);
    expect(run.output()).toContain('not confirmed; nothing was started');
    expect([await rows(), await operations()]).toEqual(before);
  });

  it('restore --yes --wait: the phases stopping, reverting, starting; the volume is the backup again', async () => {
    await writeFile(page(), 'version 2');
    const r = await svcctl([
      'backups',
      'restore',
      site.serviceInstanceId,
      site.volumeResourceId,
      backupId,
      '--yes',
      '--wait',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(json<Accepted>(r.stdout).backup).toMatchObject({ id: backupId, status: 'restoring' });
    const progress = lines(r.stderr);
    for (const line of progress) {
      expect(line).toMatch(/^(queued|phase (stopping|reverting|starting) \d+%|succeeded)$/);
    }
    const phases = [...new Set(progress.filter((l) => l.startsWith('phase ')).map((l) => l.split(' ')[1]))];
    // Each phase shown is in order (a fast one may pass between two polls).
    expect(phases).toEqual(['stopping', 'reverting', 'starting'].filter((p) => phases.includes(p)));
    expect(progress.at(-1)).toBe('succeeded');
    expect(await readFile(page(), 'utf8')).toBe('version 1');
    expect((await operations()).at(-1)).toMatchObject({ kind: 'restore', status: 'succeeded' });
  });

  it('delete removes it; deleting it again is not found (exit 3)', async () => {
    const r = await svcctl(['backups', 'delete', site.serviceInstanceId, site.volumeResourceId, backupId]);
    expect(r.code, r.stderr).toBe(0);
    expect(
      await app.sql`select 1 from service_backups where id = ${backupId} and deleted_at is null`,
    ).toHaveLength(0);
    const list = await svcctl(['backups', 'list', site.serviceInstanceId, site.volumeResourceId]);
    expect(json<{ backups: unknown[] }>(list.stdout).backups).toEqual([]);
    const again = await svcctl([
      'backups',
      'delete',
      site.serviceInstanceId,
      site.volumeResourceId,
      backupId,
    ]);
    expect(again.code).toBe(ExitCode.notFound);
    expect(again.stderr).toContain('not-found');
  });
});
