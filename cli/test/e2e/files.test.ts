// Files with svcctl against the real server, its worker and the edge gateway on the local substrate:
// mkdir, put (through a file session), ls, cat, get (through a download ticket, to a file and to
// stdout), rm, and refusals exiting with their codes while nothing changes.
import { randomBytes } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember } from '../../../test/admin-content/staff.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { newAccount } from '../../../test/support/auth.js';
import { provisionService, type Provisioned } from '../../../test/support/services.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { writeCredentials } from '../../src/credentials.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { runCli, tempDir, tempHome, type CliRun } from '../support/run-cli.js';

let app: TestApp;
let smtp: TestSmtp;
let home: ReturnType<typeof tempHome>;
let site: Provisioned;

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' }, gateway: true });
  const [owner, staff] = await Promise.all([
    newAccount(app, smtp, 'fl-cli-owner'),
    staffMember(app, smtp, 'fl-cli-staff', ['manage_services']),
  ]);
  home = tempHome();
  const { session } = owner;
  await writeCredentials(
    'default',
    { token: session.token, refresh_token: session.refresh_token, session_id: session.session_id },
    home.SVCCTL_CONFIG_DIR,
  );
  const [personal] = await app.sql<{ id: string }[]>`
    select id from organizations where personal_owner_id = ${session.user.id}`;
  const api = createClient({ baseUrl: app.baseUrl, token: session.token, retries: 0 });
  const projectId = (
    await api.projectCreate({ path: { id: personal!.id }, body: { name: 'Sites', slug: 'sites' } })
  ).id;
  site = await provisionService(staff.elevated, { projectId, productSlug: 'web-app', name: 'Shop' });
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

const svcctl = (args: string[], run: CliRun = {}) =>
  runCli(args, { ...run, env: { ...home, SVCCTL_BASE_URL: app.baseUrl, ...run.env } });
const ids = () => [site.serviceInstanceId, site.volumeResourceId];
const onVolume = (path: string) => join(app.substrateDir, 'volumes', site.volumeResourceId, path);

describe('svcctl files', () => {
  it('mkdir, put, ls, cat, get and rm', async () => {
    const mk = await svcctl(['files', 'mkdir', ...ids(), '--path', '/srv/www']);
    expect(mk.code, mk.stderr).toBe(0);
    expect(JSON.parse(mk.stdout)).toMatchObject({ kind: 'directory', path: '/srv/www' });

    const work = tempDir();
    const big = randomBytes(3 * 1024 * 1024 + 5);
    await writeFile(join(work, 'big.bin'), big);
    const put = await svcctl(['files', 'put', ...ids(), join(work, 'big.bin'), '/srv/www/big.bin']);
    expect(put.code, put.stderr).toBe(0);
    expect(put.stderr).toContain(`Uploaded ${big.length} bytes to /srv/www/big.bin`);
    expect((await readFile(onVolume('srv/www/big.bin'))).equals(big)).toBe(true);
    const text = await svcctl(['files', 'put', ...ids(), '-', '/srv/www/index.html'], { input: '<h1>hi</h1>\n' });
    expect(text.code, text.stderr).toBe(0);

    const ls = await svcctl(['files', 'ls', ...ids(), '--path', '/srv/www']);
    expect(ls.code, ls.stderr).toBe(0);
    const listing = JSON.parse(ls.stdout) as { path: string; entries: { name: string }[]; truncated: boolean };
    expect(listing.path).toBe('/srv/www');
    expect(listing.entries.map((e) => e.name).sort()).toEqual(['big.bin', 'index.html']);

    const cat = await svcctl(['files', 'cat', ...ids(), '/srv/www/index.html']);
    expect(cat.code, cat.stderr).toBe(0);
    expect(cat.stdout).toBe('<h1>hi</h1>\n');

    const get = await svcctl(['files', 'get', ...ids(), '/srv/www/big.bin', join(work, 'copy.bin')]);
    expect(get.code, get.stderr).toBe(0);
    expect((await readFile(join(work, 'copy.bin'))).equals(big)).toBe(true);
    expect((await readdir(work)).filter((n) => n.includes('partial'))).toEqual([]);
    const toStdout = await svcctl(['files', 'get', ...ids(), '/srv/www/index.html', '-']);
    expect(toStdout.code, toStdout.stderr).toBe(0);
    expect(toStdout.stdout).toBe('<h1>hi</h1>\n');

    const rm = await svcctl(['files', 'rm', ...ids(), '--path', '/srv', '--recursive']);
    expect(rm.code, rm.stderr).toBe(0);
    expect(await readdir(onVolume('.')).then((n) => n.includes('srv'))).toBe(false);
  });

  it('refusals exit with their codes and change nothing', async () => {
    await writeFile(onVolume('keep.txt'), 'keep');
    const bad = await svcctl(['files', 'cat', ...ids(), '/a/../keep.txt']);
    expect(bad.code).toBe(ExitCode.invalid);
    expect(bad.stderr).toContain('invalid-path');
    const root = await svcctl(['files', 'rm', ...ids(), '--path', '/', '--recursive']);
    expect(root.code).toBe(ExitCode.conflict);
    expect(root.stderr).toContain('mount-root');
    const missing = await svcctl(['files', 'get', ...ids(), '/nope.bin', join(tempDir(), 'x')]);
    expect(missing.code).toBe(ExitCode.notFound);
    const noDir = await svcctl(['files', 'put', ...ids(), '-', '/no/such/dir.txt'], { input: 'x' });
    expect(noDir.code).toBe(ExitCode.notFound);
    expect(await readFile(onVolume('keep.txt'), 'utf8')).toBe('keep');
    expect((await readdir(onVolume('.'))).filter((n) => n === 'no' || n.startsWith('.svc-upload-'))).toEqual([]);
  });
});
