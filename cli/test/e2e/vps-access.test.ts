// svcctl vps access | ssh-keys set | root-password | ssh against the real server, its job worker and a real
// edge (DECISIONS.md §8 "VPS access"): the key from a .pub file lets OpenSSH in through `vps ssh`, the
// password is printed alone, once, and a private key given by mistake never leaves this machine.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { randomPortPool, startTestEdge, type TestEdge } from '../../../test/support/edge.js';
import { type Provisioned } from '../../../test/support/services.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import {
  keyPair,
  keysDir,
  removeDir,
  sshByPassword,
  type KeyPair,
} from '../../../test/vps-access/ssh-login.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { cliServiceOwner, type CliServiceOwner } from '../support/service-owner.js';

let app: TestApp;
let smtp: TestSmtp;
let edge: TestEdge;
let svcctl: CliServiceOwner['svcctl'];
let vps: Provisioned;
let dir: string;
let key: KeyPair;

beforeAll(async () => {
  ensureBuilt();
  dir = await keysDir();
  key = await keyPair(dir, 'cli-key');
  smtp = await startTestSmtp();
  app = await startTestApp({
    env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000', PORT_POOL: randomPortPool(4) },
  });
  edge = await startTestEdge(app);
  const owner = await cliServiceOwner(app, smtp, 'vps-cli', { productSlug: 'vps-small', name: 'Box' });
  ({ svcctl } = owner);
  vps = owner.service;
  await edge.caughtUp();
}, 180_000);
afterAll(async () => {
  await edge?.stop();
  await app?.close();
  await smtp?.close();
  await removeDir(dir);
});

const ids = () => [vps.serviceInstanceId, vps.primaryResourceId];
const json = <T>(stdout: string) => JSON.parse(stdout) as T;
const sshId = () =>
  svcctl([
    'vps',
    'ssh',
    ...ids(),
    '--',
    '-i',
    key.file,
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    '-o',
    'BatchMode=yes',
    '-o',
    'LogLevel=ERROR',
    'id',
  ]);

describe('svcctl vps', () => {
  it('access shows the SSH address; ssh-keys set --file lets `vps ssh` in by key', async () => {
    const shown = await svcctl(['vps', 'access', ...ids()]);
    expect(shown.code, shown.stderr).toBe(0);
    const access = json<{ host: string; port: number; password_set: boolean }>(shown.stdout);
    expect(access).toMatchObject({ host: app.config.host, password_set: false, ssh_keys: [] });

    const set = await svcctl(['vps', 'ssh-keys', 'set', ...ids(), '--file', `${key.file}.pub`]);
    expect(set.code, set.stderr).toBe(0);
    expect(json(set.stdout)).toMatchObject({ ssh_keys: [{ name: 'cli-key', type: 'ssh-ed25519' }] });

    // Within 5 s of the answer (the machine's sshd may still be booting on a loaded host: a little more).
    let out = await sshId();
    for (
      const deadline = Date.now() + 20_000;
      !out.stdout.includes('uid=0(root)') && Date.now() < deadline;
    ) {
      await new Promise((r) => setTimeout(r, 300));
      out = await sshId();
    }
    expect(out.stdout, out.stderr).toContain('uid=0(root)');
    expect(out.code).toBe(0);
  });

  it('ssh-keys set refuses a private key before sending it, and changes nothing', async () => {
    const r = await svcctl(['vps', 'ssh-keys', 'set', ...ids(), '--file', key.file]);
    expect(r.code).toBe(ExitCode.usage);
    expect(r.stderr).toContain('private key');
    const shown = json<{ ssh_keys: unknown[] }>((await svcctl(['vps', 'access', ...ids()])).stdout);
    expect(shown.ssh_keys).toHaveLength(1);
  });

  it('root-password prints the password alone, once, and it signs in', async () => {
    const r = await svcctl(['vps', 'root-password', ...ids()], { env: { SVCCTL_OUTPUT: '' } });
    expect(r.code, r.stderr).toBe(0);
    const password = r.stdout.trim();
    expect(password).toMatch(/^[A-Za-z0-9_-]{24,}$/);
    expect(r.stderr).toContain('shown this once');
    expect(r.stderr).not.toContain(password);
    const access = json<{ host: string; port: number; password_set: boolean }>(
      (await svcctl(['vps', 'access', ...ids()])).stdout,
    );
    expect(access.password_set).toBe(true);
    let out = '';
    for (const deadline = Date.now() + 5_000; !out.includes('uid=0(root)') && Date.now() < deadline;) {
      out = await sshByPassword(access.host, access.port, password);
    }
    expect(out).toContain('uid=0(root)');
  });

  it('an unknown machine is not found (exit 3)', async () => {
    const r = await svcctl(['vps', 'access', vps.serviceInstanceId, randomUUID()]);
    expect(r.code).toBe(ExitCode.notFound);
  });
});
