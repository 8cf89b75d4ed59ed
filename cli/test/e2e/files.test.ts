// Files with svcctl against the real server, its worker and the edge gateway on the local substrate:
// mkdir, put (through a file session), ls, cat, get (through a download ticket, to a file and to
// stdout), rm, and refusals exiting with their codes while nothing changes.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { type Provisioned } from '../../../test/support/services.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { ExitCode } from '../../src/exit-codes.js';
import { CLI_BIN, ensureBuilt } from '../support/build.js';
import { cliServiceOwner, type CliServiceOwner } from '../support/service-owner.js';
import { tempDir } from '../support/run-cli.js';

let app: TestApp;
let smtp: TestSmtp;
let svcctl: CliServiceOwner['svcctl'];
let home: CliServiceOwner['home'];
let site: Provisioned;

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' }, gateway: true });
  const owner = await cliServiceOwner(app, smtp, 'fl-cli', { productSlug: 'web-app', name: 'Shop' });
  ({ svcctl, home } = owner);
  site = owner.service;
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

/** `svcctl shell` fed `script`, stdin held open (as a terminal's would be) until svcctl ends. */
async function shellExit(script: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI_BIN, 'shell', site.serviceInstanceId, site.primaryResourceId], {
    env: { PATH: process.env.PATH ?? '', ...home, SVCCTL_BASE_URL: app.baseUrl },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  const err: Buffer[] = [];
  child.stderr.on('data', (c: Buffer) => err.push(c));
  child.stdin.write(script);
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stderr: Buffer.concat(err).toString('utf8') };
}

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

  it('write --from-file takes a file past the argument limit, and stdin', async () => {
    // 900 KiB as one argument is over Linux's 128 KiB limit for a single argument: --content cannot.
    const text = 'line of a big config file\n'.repeat(36_000).slice(0, 900 * 1024);
    const work = tempDir();
    await writeFile(join(work, 'big.cfg'), text);
    const w = await svcctl([
      'files',
      'write',
      ...ids(),
      '--path',
      '/big.cfg',
      '--from-file',
      join(work, 'big.cfg'),
    ]);
    expect(w.code, w.stderr).toBe(0);
    expect(JSON.parse(w.stdout)).toMatchObject({ path: '/big.cfg', size_bytes: text.length });
    expect(await readFile(onVolume('big.cfg'), 'utf8')).toBe(text);
    const piped = await svcctl(['files', 'write', ...ids(), '--path', '/piped.txt', '--from-file', '-'], {
      input: 'from stdin\n',
    });
    expect(piped.code, piped.stderr).toBe(0);
    expect(await readFile(onVolume('piped.txt'), 'utf8')).toBe('from stdin\n');
    await writeFile(join(work, 'huge.cfg'), 'x'.repeat(1024 * 1024 + 1));
    const huge = await svcctl([
      'files',
      'write',
      ...ids(),
      '--path',
      '/huge.cfg',
      '--from-file',
      join(work, 'huge.cfg'),
    ]);
    expect(huge.code).toBe(ExitCode.usage);
    expect(huge.stderr).toContain('over the 1 MiB');
  });

  it('ls -o table shows the entries as rows, never JSON', async () => {
    await writeFile(onVolume('table-a.txt'), 'a');
    const ls = await svcctl(['files', 'ls', ...ids(), '-o', 'table']);
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout).not.toContain('{');
    expect(ls.stdout).toMatch(/^path: +\/$/m);
    expect(ls.stdout).toMatch(/^KIND +NAME +PATH/m);
    expect(ls.stdout).toMatch(/^file +table-a\.txt +\/table-a\.txt +\S+ +1$/m);
  });

  it('shell exits with the code the shell exited with', async () => {
    const r = await shellExit('exit 3\n');
    expect(r.code, r.stderr).toBe(3);
    const ok = await shellExit('exit\n');
    expect(ok.code, ok.stderr).toBe(0);
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
