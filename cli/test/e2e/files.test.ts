// Files with svcctl against the real server, its worker and the edge gateway on the local substrate:
// mkdir, put (through a file session), ls, cat, get (through a download ticket, to a file and to
// stdout), rm, and refusals exiting with their codes while nothing changes.
import { randomBytes } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { type Provisioned } from '../../../test/support/services.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { cliServiceOwner, type CliServiceOwner } from '../support/service-owner.js';
import { tempDir } from '../support/run-cli.js';

let app: TestApp;
let smtp: TestSmtp;
let svcctl: CliServiceOwner['svcctl'];
let site: Provisioned;

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' }, gateway: true });
  const owner = await cliServiceOwner(app, smtp, 'fl-cli', { productSlug: 'web-app', name: 'Shop' });
  ({ svcctl } = owner);
  site = owner.service;
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

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
    const text = await svcctl(['files', 'put', ...ids(), '-', '/srv/www/index.html'], {
      input: '<h1>hi</h1>\n',
    });
    expect(text.code, text.stderr).toBe(0);

    const ls = await svcctl(['files', 'ls', ...ids(), '--path', '/srv/www']);
    expect(ls.code, ls.stderr).toBe(0);
    const listing = JSON.parse(ls.stdout) as {
      path: string;
      entries: { name: string }[];
      truncated: boolean;
    };
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
    expect((await readdir(onVolume('.'))).filter((n) => n === 'no' || n.startsWith('.svc-upload-'))).toEqual(
      [],
    );
  });
});
