// Staff content and billing with svcctl against the real server: admin incidents, maintenances,
// resellers (with icon set), captcha (the secret from stdin) and wallet, each checked through the
// public read it feeds; and the refusal of a session that is not elevated.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { newAccount } from '../../../test/support/auth.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { writeCredentials } from '../../src/credentials.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { runCli, tempDir, tempHome, type CliRun } from '../support/run-cli.js';

let app: TestApp;
let smtp: TestSmtp;
type Home = ReturnType<typeof tempHome>;
/** A staff member holding manage_public_content and manage_billing, whose saved session svcctl elevated. */
let staff: Home;
/** The same permissions, signed in but never elevated. */
let plain: Home;

const svcctl = (home: Home | null, args: string[], run: CliRun = {}) =>
  runCli(args, { ...run, env: { ...(home ?? {}), SVCCTL_BASE_URL: app.baseUrl, ...run.env } });
const json = <T>(stdout: string) => JSON.parse(stdout) as T;

async function signedIn(tag: string): Promise<{ home: Home; userId: string; token: string }> {
  const { session } = await newAccount(app, smtp, tag);
  await app.sql`
    update users set system_permissions = '{manage_public_content,manage_billing}' where id = ${session.user.id}`;
  const home = tempHome();
  await writeCredentials(
    'default',
    { token: session.token, refresh_token: session.refresh_token, session_id: session.session_id },
    home.SVCCTL_CONFIG_DIR,
  );
  return { home, userId: session.user.id, token: session.token };
}

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  staff = (await signedIn('cli-staff')).home;
  const r = await svcctl(staff, ['sudo', 'setup', '--non-interactive', '--pin-stdin'], { input: '246810\n' });
  expect(r.code, r.stderr).toBe(0);
  plain = (await signedIn('cli-plain')).home;
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

describe('svcctl admin (public content and billing)', () => {
  it('incidents create | update | resolve, seen through public incidents list', async () => {
    const created = await svcctl(staff, [
      'admin',
      'incidents',
      'create',
      '--title',
      'Storage degraded',
      '--message',
      'fra-1 is slow',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const incident = json<{ id: string; resolved_at: string | null }>(created.stdout);
    expect(incident.resolved_at).toBeNull();
    const updated = await svcctl(staff, ['admin', 'incidents', 'update', incident.id, '--message', 'null']);
    expect(updated.code, updated.stderr).toBe(0);
    expect(json<{ message: string | null }>(updated.stdout).message).toBeNull();
    const listed = await svcctl(null, ['public', 'incidents', 'list']);
    expect(json<{ id: string; title: string }[]>(listed.stdout)).toContainEqual(
      expect.objectContaining({ id: incident.id, title: 'Storage degraded', message: null }),
    );
    expect((await svcctl(staff, ['admin', 'incidents', 'resolve', incident.id])).code).toBe(0);
    const after = await svcctl(null, ['public', 'incidents', 'list']);
    expect(json<{ id: string }[]>(after.stdout).map((i) => i.id)).not.toContain(incident.id);
  });

  it('maintenances create | cancel', async () => {
    const at = new Date(app.clock.now().getTime() + 3_600_000).toISOString();
    const created = await svcctl(staff, [
      'admin',
      'maintenances',
      'create',
      '--title',
      'DB upgrade',
      '--scheduled-at',
      at,
      '--expected-duration-minutes',
      '45',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const { id } = json<{ id: string }>(created.stdout);
    expect(
      json<{ id: string }[]>((await svcctl(null, ['public', 'maintenances', 'list'])).stdout),
    ).toContainEqual({
      id,
      title: 'DB upgrade',
      scheduled_at: at,
      expected_duration_minutes: 45,
    });
    expect((await svcctl(staff, ['admin', 'maintenances', 'cancel', id])).code).toBe(0);
    expect(json<{ id: string }[]>((await svcctl(null, ['public', 'maintenances', 'list'])).stdout)).toEqual(
      [],
    );
  });

  it('resellers create | icon set | update --no-enabled, seen through public resellers by-host', async () => {
    const hostname = `cli-${Date.now().toString(36)}.example`;
    const created = await svcctl(staff, [
      'admin',
      'resellers',
      'create',
      '--name',
      'Blockhost',
      '--hostname',
      hostname,
      '--brand-color',
      '#112233',
      '--og-image-mode',
      'logo',
    ]);
    expect(created.code, created.stderr).toBe(0);
    const { id } = json<{ id: string }>(created.stdout);

    const file = join(tempDir(), 'logo.png');
    writeFileSync(
      file,
      await sharp({ create: { width: 40, height: 40, channels: 3, background: '#ff0000' } })
        .png()
        .toBuffer(),
    );
    const icon = await svcctl(staff, ['admin', 'resellers', 'icon', 'set', id, file]);
    expect(icon.code, icon.stderr).toBe(0);
    const { icon_asset_id } = json<{ icon_asset_id: string }>(icon.stdout);
    const branding = await svcctl(null, ['public', 'resellers', 'by-host', hostname]);
    expect(json(branding.stdout)).toMatchObject({
      id,
      icon_asset_id,
      resolved_og_image_asset_id: icon_asset_id,
    });

    const svg = join(tempDir(), 'logo.svg');
    writeFileSync(svg, '<svg xmlns="http://www.w3.org/2000/svg"/>');
    const refused = await svcctl(staff, ['admin', 'resellers', 'icon', 'set', id, svg]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('unsupported-media-type');

    expect((await svcctl(staff, ['admin', 'resellers', 'update', id, '--no-enabled'])).code).toBe(0);
    expect((await svcctl(null, ['public', 'resellers', 'by-host', hostname])).code).toBe(ExitCode.notFound);
  });

  it('captcha set takes the secret from stdin and never prints it; captcha delete', async () => {
    const secret = 'cli-secret-4f9a2b';
    const set = await svcctl(
      staff,
      [
        'admin',
        'captcha',
        'set',
        'cli.example',
        '--enabled',
        '--provider',
        'hcaptcha',
        '--site-key',
        'cli-site',
        '--protected-actions',
        'login',
        '--protected-actions',
        'signup',
        '--secret-stdin',
      ],
      { input: `${secret}\n` },
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout + set.stderr).not.toContain(secret);
    expect(json(set.stdout)).toMatchObject({
      hostname: 'cli.example',
      secret_set: true,
      protected_actions: ['login', 'signup'],
    });
    const [row] = await app.sql<
      { secret_sealed: string }[]
    >`select secret_sealed from captcha_configs where hostname = 'cli.example'`;
    expect(await app.box.openText('captcha-secret', row!.secret_sealed)).toBe(secret);
    const shown = await svcctl(null, ['public', 'captcha-config', 'get', 'cli.example']);
    expect(json(shown.stdout)).toEqual({
      enabled: true,
      provider: 'hcaptcha',
      protected_actions: ['login', 'signup'],
      site_key: 'cli-site',
    });

    expect((await svcctl(staff, ['admin', 'captcha', 'delete', 'cli.example'])).code).toBe(0);
    expect(
      json<{ enabled: boolean }>(
        (await svcctl(null, ['public', 'captcha-config', 'get', 'cli.example'])).stdout,
      ).enabled,
    ).toBe(false);
  });

  it("wallet set drives the organization's standing", async () => {
    const owner = await newAccount(app, smtp, 'cli-owner');
    const [org] = await app.sql<
      { id: string }[]
    >`select id from organizations where personal_owner_id = ${owner.session.user.id}`;
    const set = await svcctl(staff, [
      'admin',
      'wallet',
      'set',
      org!.id,
      '--balance',
      '5',
      '--reservations',
      '0',
      '--floor',
      '10',
      '--credit-limit',
      '0',
      '--open-receivables',
      '0',
    ]);
    expect(set.code, set.stderr).toBe(0);
    expect(json(set.stdout)).toMatchObject({ balance: '5.00', floor: '10.00', restricted: true });
    const standing = await runCli(['orgs', 'standing', org!.id], {
      env: { SVCCTL_BASE_URL: app.baseUrl, SVCCTL_TOKEN: owner.session.token },
    });
    expect(json(standing.stdout)).toMatchObject({
      restricted: true,
      detail: { balance: '5.00', floor: '10.00' },
    });
  });

  it('refuses a staff session that is not elevated (exit 4, elevation-required), creating nothing', async () => {
    const before = await app.sql`select id from public_incidents`;
    const r = await svcctl(plain, ['admin', 'incidents', 'create', '--title', 'Not elevated']);
    expect(r.code).toBe(ExitCode.auth);
    expect(r.stderr).toContain('elevation-required');
    expect(await app.sql`select id from public_incidents`).toHaveLength(before.length);
  });
});
