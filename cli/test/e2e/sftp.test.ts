// svcctl sftp against the real server: show before provisioning (exit 6, the 422), enable, show,
// rotate printing the new password once (a digest of it stored), disable, and a stranger's service
// answering as unknown.
import { randomUUID } from 'node:crypto';
import argon2 from 'argon2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staffMember } from '../../../test/admin-content/staff.js';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { newAccount } from '../../../test/support/auth.js';
import { provisionService, type Provisioned } from '../../../test/support/services.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { createClient } from '@svcplatform/sdk';
import { writeCredentials } from '../../src/credentials.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { runCli, tempHome, type CliRun } from '../support/run-cli.js';

let app: TestApp;
let smtp: TestSmtp;
let home: ReturnType<typeof tempHome>;
let site: Provisioned;

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  const [owner, staff] = await Promise.all([
    newAccount(app, smtp, 'sftp-cli-owner'),
    staffMember(app, smtp, 'sftp-cli-staff', ['manage_services']),
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
