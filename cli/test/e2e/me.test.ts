// The identity commands against the real server: me show, me update, onboarding complete, discovery
// list and mark, me avatar set FILE and delete (and the uploaded avatar read back with assets get),
// in every output format, with the exit codes of what goes wrong.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { newAccount } from '../../../test/support/auth.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { writeCredentials } from '../../src/credentials.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { runCli, tempDir, tempHome, type CliRun } from '../support/run-cli.js';

let app: TestApp;
let smtp: TestSmtp;

beforeAll(async () => {
  ensureBuilt();
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
}, 180_000);
afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

type Home = ReturnType<typeof tempHome>;

const svcctl = (home: Home, args: string[], run: CliRun = {}) =>
  runCli(args, { ...run, env: { ...home, SVCCTL_BASE_URL: app.baseUrl, ...run.env } });

/** A new account whose session is saved for the profile, as `svcctl login` saves it. */
async function signedIn(tag: string): Promise<{ home: Home; email: string }> {
  const { email, session } = await newAccount(app, smtp, tag);
  const home = tempHome();
  await writeCredentials(
    'default',
    { token: session.token, refresh_token: session.refresh_token, session_id: session.session_id },
    home.SVCCTL_CONFIG_DIR,
  );
  return { home, email };
}

interface Me {
  id: string;
  name: string;
  language: string;
  email: string | null;
  is_onboarded: boolean;
  chat_notifications_enabled: boolean;
  billing_country_code: string | null;
  avatar_asset_id: string | null;
}

const json = <T>(stdout: string) => JSON.parse(stdout) as T;

// A 1×1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

describe('svcctl me', () => {
  it('me show prints the identity as JSON, YAML or a table', async () => {
    const { home, email } = await signedIn('me-show');
    const r = await svcctl(home, ['me', 'show']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const me = json<Me>(r.stdout);
    expect(me).toMatchObject({ name: 'Test Person', email, is_onboarded: false, avatar_asset_id: null });

    const yaml = await svcctl(home, ['me', 'show', '-o', 'yaml']);
    expect(parseYaml(yaml.stdout)).toEqual(me);
    const table = await svcctl(home, ['me', 'show', '-o', 'table']);
    expect(table.stdout).toMatch(new RegExp(`^email: +${email.replace(/[.]/g, '\\.')}$`, 'm'));
    expect(table.stdout).toMatch(/^is_onboarded: +false$/m);
  });

  it('me update changes the fields given, and --no-chat-notifications-enabled turns one off', async () => {
    const { home } = await signedIn('me-update');
    const r = await svcctl(home, [
      'me',
      'update',
      '--name',
      'Ada Lovelace',
      '--language',
      'de-AT',
      '--billing-country-code',
      'at',
      '--chat-notifications-enabled',
    ]);
    expect(r.stderr).toBe('');
    expect(json<Me>(r.stdout)).toMatchObject({
      name: 'Ada Lovelace',
      language: 'de-AT',
      billing_country_code: 'AT',
      chat_notifications_enabled: true,
    });
    const off = await svcctl(home, ['me', 'update', '--no-chat-notifications-enabled']);
    expect(json<Me>(off.stdout)).toMatchObject({ name: 'Ada Lovelace', chat_notifications_enabled: false });
    expect(json<Me>((await svcctl(home, ['me', 'show'])).stdout)).toMatchObject({
      language: 'de-AT',
      chat_notifications_enabled: false,
    });
  });

  it('me update refuses a bad name (exit 5) and a bad language before sending (exit 5 from the contract)', async () => {
    const { home } = await signedIn('me-update-bad');
    const name = await svcctl(home, ['me', 'update', '--name', '!!']);
    expect(name.code).toBe(ExitCode.invalid);
    expect(name.stderr).toMatch(/^ {2}code: +invalid-field-value$/m);
    expect(name.stderr).toContain('body /name');
    const language = await svcctl(home, ['me', 'update', '--language', 'not a tag']);
    expect(language.code).toBe(ExitCode.invalid);
    expect(language.stderr).toContain('body /language');
  });

  it('onboarding complete marks the account onboarded once; again is 422 (exit 6)', async () => {
    const { home } = await signedIn('onboarding');
    const r = await svcctl(home, ['onboarding', 'complete', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(json<Me>(r.stdout).is_onboarded).toBe(true);
    const again = await svcctl(home, ['onboarding', 'complete']);
    expect(again.code).toBe(ExitCode.conflict);
    expect(again.stderr).toMatch(/^ {2}code: +onboarding-already-completed$/m);
  });

  it('a different billing country after onboarding is 422 billing-country-already-set (exit 6)', async () => {
    const { home } = await signedIn('country');
    expect((await svcctl(home, ['me', 'update', '--billing-country-code', 'DE'])).code).toBe(0);
    expect((await svcctl(home, ['onboarding', 'complete'])).code).toBe(0);
    const r = await svcctl(home, ['me', 'update', '--billing-country-code', 'FR']);
    expect(r.code).toBe(ExitCode.conflict);
    expect(r.stderr).toMatch(/^ {2}code: +billing-country-already-set$/m);
  });

  it('needs a sign-in: exit 4 before sending anything', async () => {
    const r = await svcctl(tempHome(), ['me', 'show']);
    expect(r.code).toBe(ExitCode.auth);
    expect(r.stderr).toMatch(/not signed in \(profile "default"\)/);
  });
});

describe('svcctl discovery', () => {
  it('mark takes keys as arguments and with --keys; list shows when each was first seen', async () => {
    const { home } = await signedIn('discovery');
    expect(json<{ seen: object }>((await svcctl(home, ['discovery', 'list'])).stdout)).toEqual({ seen: {} });

    const mark = await svcctl(home, ['discovery', 'mark', 'nav:billing', 'tab:servers/logs']);
    expect(mark).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect((await svcctl(home, ['discovery', 'mark', '--keys', 'ui:tour', 'product:vps'])).code).toBe(0);
    const list = json<{ seen: Record<string, string> }>((await svcctl(home, ['discovery', 'list'])).stdout);
    expect(Object.keys(list.seen).sort()).toEqual([
      'nav:billing',
      'product:vps',
      'tab:servers/logs',
      'ui:tour',
    ]);
    const first = list.seen['nav:billing'];
    expect(Date.parse(first!)).not.toBeNaN();

    // Marked again: the first time stays.
    expect((await svcctl(home, ['discovery', 'mark', 'nav:billing'])).code).toBe(0);
    const yaml = await svcctl(home, ['discovery', 'list', '-o', 'yaml']);
    expect((parseYaml(yaml.stdout) as { seen: Record<string, string> }).seen['nav:billing']).toBe(first);
  });

  it('refuses a bad key, naming it, and writes nothing (exit 5); no keys at all is a usage error', async () => {
    const { home } = await signedIn('discovery-bad');
    const r = await svcctl(home, ['discovery', 'mark', 'nav:ok', 'Nav:Bad']);
    expect(r.code).toBe(ExitCode.invalid);
    expect(r.stderr).toContain('body /keys/1');
    expect(json<{ seen: object }>((await svcctl(home, ['discovery', 'list'])).stdout)).toEqual({ seen: {} });
    const none = await svcctl(home, ['discovery', 'mark']);
    expect(none.code).toBe(ExitCode.usage);
    expect(none.stderr).toMatch(/--keys/);
  });
});

describe('svcctl me avatar', () => {
  it('set FILE uploads the image; the new avatar reads back as WebP; delete removes it', async () => {
    const { home } = await signedIn('avatar');
    const dir = tempDir('svcctl-avatar-');
    const file = join(dir, 'portrait.png');
    writeFileSync(file, PNG);
    const r = await svcctl(home, ['me', 'avatar', 'set', file]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const me = json<Me>(r.stdout);
    expect(me.avatar_asset_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(json<Me>((await svcctl(home, ['me', 'show'])).stdout).avatar_asset_id).toBe(me.avatar_asset_id);

    const out = join(dir, 'avatar.webp');
    const get = await svcctl(home, ['assets', 'get', me.avatar_asset_id!, '--output', out]);
    expect(get.code).toBe(0);
    const bytes = readFileSync(out);
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(bytes.subarray(8, 12).toString('latin1')).toBe('WEBP');

    // From stdin, too: a new asset id every time.
    const again = await svcctl(home, ['me', 'avatar', 'set', '-'], { input: PNG });
    expect(again.code).toBe(0);
    expect(json<Me>(again.stdout).avatar_asset_id).not.toBe(me.avatar_asset_id);

    const del = await svcctl(home, ['me', 'avatar', 'delete']);
    expect(del).toMatchObject({ code: 0, stdout: '' });
    expect(json<Me>((await svcctl(home, ['me', 'show'])).stdout).avatar_asset_id).toBeNull();
  });

  it('refuses what is not an image (415, exit 5) and a file it cannot read (exit 2)', async () => {
    const { home } = await signedIn('avatar-bad');
    const dir = tempDir('svcctl-avatar-');
    const svg = join(dir, 'evil.png');
    writeFileSync(svg, '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    const r = await svcctl(home, ['me', 'avatar', 'set', svg]);
    expect(r.code).toBe(ExitCode.invalid);
    expect(r.stderr).toMatch(/\(HTTP 415\)/);
    expect(r.stderr).toMatch(/^ {2}code: +unsupported-media-type$/m);

    const missing = await svcctl(home, ['me', 'avatar', 'set', join(dir, 'nope.png')]);
    expect(missing.code).toBe(ExitCode.usage);
    expect(missing.stderr).toContain('ENOENT');
    const none = await svcctl(home, ['me', 'avatar', 'set']);
    expect(none.code).toBe(ExitCode.usage);
    expect(none.stderr).toContain("missing required argument 'FILE'");
  });

  it('--help names the file argument', async () => {
    const r = await runCli(['me', 'avatar', 'set', '--help']);
    expect(r.stdout).toMatch(/^Usage: svcctl me avatar set \[options\] <FILE>$/m);
    expect(r.stdout).toContain('PUT /api/v2/me/avatar');
  });
});
