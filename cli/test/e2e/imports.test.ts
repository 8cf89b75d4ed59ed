// Imports with svcctl against the real server and its worker on the local substrate, the remote a real
// SFTP server (ssh2's Server): start with --password-stdin --wait (a plain line per change on stderr, the
// files in the volume), the password never on the command line nor in the output; list and show; a
// running service refused with its exit code and nothing started; cancel of a finished import exiting 6.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type SvcClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { awaitOperation, type Provisioned } from '../../../test/support/services.js';
import { startSsh2Sftp, type TestSftp } from '../../../test/support/sftp-server.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { cliServiceOwner, type CliServiceOwner } from '../support/service-owner.js';

let app: TestApp;
let smtp: TestSmtp;
let svcctl: CliServiceOwner['svcctl'];
let site: Provisioned;
let api: SvcClient;
let sftp: TestSftp;
const remoteDir = join(process.cwd(), '.tmp', `imports-cli-${randomBytes(4).toString('hex')}`);

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', IMPORT_ALLOWED_NETWORKS: '127.0.0.0/8' },
  });
  const owner = await cliServiceOwner(app, smtp, 'im-cli', { productSlug: 'web-app', name: 'Shop' });
  ({ svcctl } = owner);
  api = owner.api;
  site = owner.service;
  await mkdir(join(remoteDir, 'www'), { recursive: true });
  await writeFile(join(remoteDir, 'www/index.html'), 'from the old host');
  sftp = await startSsh2Sftp(remoteDir);
}, 400_000);
afterAll(async () => {
  await sftp?.close();
  await app?.close();
  await smtp?.close();
  await rm(remoteDir, { recursive: true, force: true });
});

const startArgs = () => [
  'imports',
  'start',
  site.serviceInstanceId,
  '--host',
  '127.0.0.1',
  '--port',
  String(sftp.port),
  '--username',
  sftp.username,
  '--remote-path',
  '/www',
  '--password-stdin',
];
const importRows = () =>
  app.sql`select id, status from service_imports where service_instance_id = ${site.serviceInstanceId} order by id`;

describe('svcctl imports', () => {
  it('start on a running service exits 6 (service-running) and starts nothing', async () => {
    const r = await svcctl(startArgs(), { input: `${sftp.password}\n` });
    expect(r.code, r.stderr).toBe(ExitCode.conflict);
    expect(r.stderr).toContain('service-running');
    expect(await importRows()).toEqual([]);
  });

  it('start --password-stdin --wait copies the files; list and show; cancel when finished exits 6', async () => {
    const stop = await api.serviceInstancePower({
      path: { id: site.serviceInstanceId },
      body: { action: 'stop' },
    });
    await awaitOperation(api, site.serviceInstanceId, stop.operation_id, 60_000);
    const r = await svcctl([...startArgs(), '--wait'], { input: `${sftp.password}\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain(sftp.password);
    const started = JSON.parse(r.stdout) as { id: string; status: string };
    expect(started.status).toBe('preparing');
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe('succeeded');
    expect(
      await readFile(join(app.substrateDir, 'volumes', site.volumeResourceId, 'index.html'), 'utf8'),
    ).toBe('from the old host');

    const list = await svcctl(['imports', 'list', site.serviceInstanceId]);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject({ imports: [{ id: started.id, status: 'succeeded' }] });
    const show = await svcctl(['imports', 'show', site.serviceInstanceId, started.id]);
    expect(JSON.parse(show.stdout)).toMatchObject({
      id: started.id,
      status: 'succeeded',
      progress_percent: 100,
    });

    const before = await importRows();
    const cancel = await svcctl(['imports', 'cancel', site.serviceInstanceId, started.id]);
    expect(cancel.code).toBe(ExitCode.conflict);
    expect(cancel.stderr).toContain('import-finished');
    expect(await importRows()).toEqual(before);
  });
});
