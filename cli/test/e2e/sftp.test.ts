// svcctl sftp against the real server: show before provisioning (exit 6, the 422), enable, show,
// rotate printing the new password once (a digest of it stored), disable, and a stranger's service
// answering as unknown.
import { randomUUID } from 'node:crypto';
import argon2 from 'argon2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { type Provisioned } from '../../../test/support/services.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { cliServiceOwner, type CliServiceOwner } from '../support/service-owner.js';

let app: TestApp;
let smtp: TestSmtp;
let svcctl: CliServiceOwner['svcctl'];
let site: Provisioned;

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  const owner = await cliServiceOwner(app, smtp, 'sftp-cli', { productSlug: 'web-app', name: 'Shop' });
  ({ svcctl } = owner);
  site = owner.service;
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

const json = <T>(stdout: string) => JSON.parse(stdout) as T;
const row = async () =>
  (
    await app.sql<{ enabled: boolean; password_digest: string | null }[]>`
      select enabled, password_digest from sftp_accounts where service_instance_id = ${site.serviceInstanceId}`
  )[0];

describe('svcctl sftp', () => {
  it('show before the account exists: the 422 sftp-not-provisioned, exit 6, nothing made', async () => {
    const r = await svcctl(['sftp', 'show', site.serviceInstanceId]);
    expect(r.code).toBe(ExitCode.conflict);
    expect(r.stderr).toContain('sftp-not-provisioned');
    expect(await row()).toBeUndefined();
  });

  it('enable provisions it; show prints it; rotate prints the password once; disable turns it off', async () => {
    const enabled = await svcctl(['sftp', 'enable', site.serviceInstanceId]);
    expect(enabled.code, enabled.stderr).toBe(0);
    expect(json(enabled.stdout)).toMatchObject({
      enabled: true,
      password_set: false,
      port: app.config.sftpPort,
    });

    const rotated = await svcctl(['sftp', 'rotate', site.serviceInstanceId]);
    expect(rotated.code, rotated.stderr).toBe(0);
    const { password, username } = json<{ password: string; username: string }>(rotated.stdout);
    expect(await argon2.verify((await row())!.password_digest!, password)).toBe(true);

    const shown = await svcctl(['sftp', 'show', site.serviceInstanceId]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(json(shown.stdout)).toMatchObject({ username, enabled: true, password_set: true });
    expect(shown.stdout).not.toContain(password);

    const disabled = await svcctl(['sftp', 'disable', site.serviceInstanceId]);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(json(disabled.stdout)).toMatchObject({ enabled: false });
    expect((await row())!.enabled).toBe(false);
  });

  it('an unknown service is not found (exit 3) and changes nothing', async () => {
    const before = await row();
    const r = await svcctl(['sftp', 'enable', randomUUID()]);
    expect(r.code).toBe(ExitCode.notFound);
    expect(await row()).toEqual(before);
  });
});
