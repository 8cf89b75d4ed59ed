// Elevation with svcctl against the real server: a PIN (sudo setup, elevate, exit, disable) and an
// authenticator app (sudo totp enroll, verify), asked for on a terminal, through pipes and with
// --non-interactive; the elevated token saved for the profile with its elevated_until, sent by later
// commands, carried over by refreshes while the window lasts and dropped after it. TOTP codes are
// computed here from the enrolled secret (RFC 6238 with node:crypto), independently of the server.
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startTestApp, type TestApp } from '../../../test/support/app.js';
import { newAccount } from '../../../test/support/auth.js';
import { startTestSmtp, type TestSmtp } from '../../../test/support/smtp.js';
import { writeCredentials } from '../../src/credentials.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { converse, hasScript } from '../support/interactive.js';
import { runCli, tempHome, type CliRun } from '../support/run-cli.js';

let app: TestApp;
let smtp: TestSmtp;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const PIN = '246810';

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

const env = (home: Home) => ({ ...home, SVCCTL_BASE_URL: app.baseUrl });
const svcctl = (home: Home, args: string[], run: CliRun = {}) =>
  runCli(args, { ...run, env: { ...env(home), ...run.env } });

interface Saved {
  token?: string;
  refresh_token?: string;
  session_id?: string;
  elevated_until?: string;
}

async function saved(home: Home): Promise<Saved | undefined> {
  const text = await readFile(join(home.SVCCTL_CONFIG_DIR, 'credentials.yaml'), 'utf8').catch(() => '');
  return ((parseYaml(text) ?? {}) as { profiles?: Record<string, Saved> }).profiles?.default;
}

/** A new account whose session is saved for the profile, as `svcctl login` saves it. */
async function signedIn(tag: string): Promise<Home> {
  const { session } = await newAccount(app, smtp, tag);
  const home = tempHome();
  await writeCredentials(
    'default',
    { token: session.token, refresh_token: session.refresh_token, session_id: session.session_id },
    home.SVCCTL_CONFIG_DIR,
  );
  return home;
}

interface Status {
  is_elevated: boolean;
  elevated_until: string | null;
  available_methods: string[];
  enrolled_methods: string[];
}

async function status(home: Home): Promise<Status> {
  const r = await svcctl(home, ['sudo', 'status', '-o', 'json']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as Status;
}

/** `svcctl sudo setup --non-interactive --pin-stdin`: the printed summary. */
async function setUpPin(home: Home): Promise<{ profile: string; elevated_until: string }> {
  const r = await svcctl(home, ['sudo', 'setup', '--non-interactive', '--pin-stdin'], { input: `${PIN}\n` });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as { profile: string; elevated_until: string };
}

/** Moves the server's clock for the duration of `fn`, and back. */
async function withClock<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  app.clock.advance(ms);
  try {
    return await fn();
  } finally {
    app.clock.advance(-ms);
  }
}

// RFC 6238 (TOTP) over RFC 4226 (HOTP): HMAC-SHA-1 of the 30-second step, dynamically truncated.
function base32(secret: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const ch of secret.replace(/=+$/, '').toUpperCase()) {
    const v = alphabet.indexOf(ch);
    if (v < 0) throw new Error(`not base32: ${ch}`);
    bits += v.toString(2).padStart(5, '0');
  }
  const bytes = bits.match(/.{8}/g) ?? [];
  return Buffer.from(bytes.map((b) => parseInt(b, 2)));
}

/** The code of the step `offset` steps after the server's current one. */
function totp(secret: string, offset = 0): string {
  const step = Math.floor(app.clock.now().getTime() / 30_000) + offset;
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', base32(secret)).update(counter).digest();
  const at = mac[mac.length - 1]! & 0x0f;
  const value = (mac.readUInt32BE(at) & 0x7fffffff) % 1_000_000;
  return String(value).padStart(6, '0');
}

describe('svcctl sudo with a PIN', () => {
  it('setup elevates; the elevated token and elevated_until are saved, shown, and ended by exit', async () => {
    const home = await signedIn('sudo-setup');
    const before = (await saved(home))!;
    expect(await status(home)).toEqual({
      is_elevated: false,
      elevated_until: null,
      available_methods: ['pin', 'totp', 'webauthn'],
      enrolled_methods: [],
    });

    const summary = await setUpPin(home);
    expect(summary).toEqual({ profile: 'default', elevated_until: expect.any(String) });
    const until = summary.elevated_until;
    expect(Date.parse(until) - app.clock.now().getTime()).toBeGreaterThan(7.9 * HOUR);
    const elevated = (await saved(home))!;
    expect(elevated).toEqual({
      token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
      refresh_token: before.refresh_token, // not rotated
      session_id: before.session_id,
      elevated_until: until,
    });
    expect(elevated.token).not.toBe(before.token);

    expect(await status(home)).toMatchObject({
      is_elevated: true,
      elevated_until: until,
      enrolled_methods: ['pin'],
    });
    const session = await svcctl(home, ['session', '-o', 'yaml']);
    expect(parseYaml(session.stdout)).toMatchObject({ session_id: before.session_id, elevated_until: until });

    const exit = await svcctl(home, ['sudo', 'exit']);
    expect(exit).toMatchObject({ code: 0, stdout: '' });
    expect(exit.stderr).toBe('Not elevated any more (profile "default").\n');
    const after = (await saved(home))!;
    expect(after).toEqual({
      token: expect.any(String),
      refresh_token: before.refresh_token,
      session_id: before.session_id,
    });
    expect(after.token).not.toBe(elevated.token);
    expect(await status(home)).toMatchObject({ is_elevated: false, elevated_until: null });
    expect(JSON.parse((await svcctl(home, ['session'])).stdout)).toMatchObject({ elevated_until: null });
  });

  it('elevate: a wrong PIN exits 5; the right one elevates, and later commands send the elevated token', async () => {
    const home = await signedIn('sudo-elevate');
    await setUpPin(home);
    expect((await svcctl(home, ['sudo', 'exit', '-q'])).code).toBe(0);

    // Removing a method needs an elevated session: refused, with a hint.
    const refused = await svcctl(home, ['sudo', 'disable', '--method', 'pin']);
    expect(refused.code).toBe(ExitCode.auth);
    expect(refused.stderr).toMatch(/^ {2}code: +elevation-required$/m);
    expect(refused.stderr).toContain('svcctl sudo elevate');

    const wrong = await svcctl(home, ['sudo', 'elevate', '--non-interactive', '--pin-stdin'], {
      input: '135790\n',
    });
    expect(wrong.code).toBe(ExitCode.invalid);
    expect(wrong.stderr).toMatch(/^ {2}code: +invalid-field-value$/m);
    expect((await saved(home))!.elevated_until).toBeUndefined();

    const right = await svcctl(home, ['sudo', 'elevate', '--pin-stdin', '-o', 'yaml'], { input: `${PIN}\n` });
    expect(right.code).toBe(0);
    const printed = parseYaml(right.stdout) as { profile: string; elevated_until: string };
    expect(printed).toEqual({ profile: 'default', elevated_until: (await saved(home))!.elevated_until });
    expect(right.stdout).not.toContain((await saved(home))!.token!);

    const disable = await svcctl(home, ['sudo', 'disable', '--method', 'pin']);
    expect(disable).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect((await status(home)).enrolled_methods).toEqual([]);
  });

  it('a refresh carries the elevation over while the window lasts, and not after it', async () => {
    const home = await signedIn('sudo-refresh');
    const { elevated_until: until } = await setUpPin(home);
    const first = (await saved(home))!;

    // 61 minutes on: the elevated token (one hour) has expired, the window (eight hours) has not.
    await withClock(61 * MINUTE, async () => {
      expect(await status(home)).toMatchObject({ is_elevated: true, elevated_until: until });
      const refreshed = (await saved(home))!;
      expect(refreshed.refresh_token).not.toBe(first.refresh_token);
      expect(refreshed.token).not.toBe(first.token);
      expect(refreshed.elevated_until).toBe(until);

      // Past the window: the next refresh answers an un-elevated token, and elevated_until goes.
      await withClock(8 * HOUR, async () => {
        expect(await status(home)).toMatchObject({ is_elevated: false, elevated_until: null });
        const lapsed = (await saved(home))!;
        expect(lapsed.refresh_token).not.toBe(refreshed.refresh_token);
        expect(lapsed.elevated_until).toBeUndefined();
      });
    });
  });

  it.skipIf(!hasScript)(
    'on a terminal: setup asks for the PIN twice unseen; elevate asks again after a wrong one',
    async () => {
      const home = await signedIn('sudo-tty');
      const setup = converse(['sudo', 'setup'], { terminal: true, env: env(home) });
      await setup.waitFor('New PIN (6 digits): ');
      setup.type(`${PIN}\n`);
      await setup.waitFor('Repeat the PIN: ');
      setup.type(`${PIN}\n`);
      expect(await setup.exit).toBe(0);
      expect(setup.output()).not.toContain(PIN);
      expect(setup.output()).toMatch(/Elevated until \d{4}-\d\d-\d\dT[\d:.]+Z \(profile "default"\)/);

      expect((await svcctl(home, ['sudo', 'exit', '-q'])).code).toBe(0);
      const elevate = converse(['sudo', 'elevate'], { terminal: true, env: env(home) });
      await elevate.waitFor('PIN: ');
      elevate.type('135790\n');
      await elevate.waitFor('That PIN is wrong; try again.');
      await elevate.waitFor('PIN: ');
      elevate.type(`${PIN}\n`);
      expect(await elevate.exit).toBe(0);
      expect(elevate.output()).not.toContain(PIN);
      expect(elevate.output()).not.toContain('135790');
      expect((await saved(home))!.elevated_until).toEqual(expect.any(String));
    },
  );

  it.each([
    [
      '--non-interactive without a PIN',
      ['sudo', 'elevate', '--non-interactive'],
      /--non-interactive needs --pin or --pin-stdin/,
    ],
    ['a PIN that is not 6 digits', ['sudo', 'setup', '--pin-stdin'], /the PIN must be 6 digits/],
    [
      '--code that is not 6 digits',
      ['sudo', 'totp', 'verify', '--code', '12ab56'],
      /--code must be the 6 digits/,
    ],
    [
      'totp verify --non-interactive without --code',
      ['sudo', 'totp', 'verify', '--non-interactive'],
      /--non-interactive needs --code/,
    ],
  ])('refuses %s before sending (exit 2)', async (_name, args, message) => {
    const home = await signedIn('sudo-usage');
    const r = await svcctl(home, args, { input: '12345\n' });
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(ExitCode.usage);
    expect(await status(home)).toMatchObject({ is_elevated: false, enrolled_methods: [] });
  });

  it('needs a sign-in (exit 4), and with --token prints the new token since there is nowhere to save it', async () => {
    const none = await svcctl(tempHome(), ['sudo', 'elevate', '--pin-stdin'], { input: `${PIN}\n` });
    expect(none.code).toBe(ExitCode.auth);
    expect(none.stderr).toMatch(/not signed in/);

    const { session } = await newAccount(app, smtp, 'sudo-token');
    const home = tempHome();
    const r = await svcctl(home, ['--token', session.token, 'sudo', 'setup', '--pin-stdin'], {
      input: `${PIN}\n`,
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('printed, not saved');
    const answer = JSON.parse(r.stdout) as { token: string; elevated_until: string };
    expect(answer.token).not.toBe(session.token);
    const st = await svcctl(home, ['--token', answer.token, 'sudo', 'status']);
    expect(JSON.parse(st.stdout)).toMatchObject({ is_elevated: true, elevated_until: answer.elevated_until });
    expect(await saved(home)).toBeUndefined();
  });
});

describe('svcctl sudo totp', () => {
  interface Pending {
    account: string;
    issuer: string;
    otpauth_url: string;
    secret: string;
  }

  it('enroll --non-interactive prints the secret; --code finishes and elevates; verify elevates again', async () => {
    const home = await signedIn('totp-script');
    const start = await svcctl(home, ['sudo', 'totp', 'enroll', '--non-interactive']);
    expect(start.stderr).toBe('');
    const pending = JSON.parse(start.stdout) as Pending;
    expect(pending.otpauth_url).toMatch(/^otpauth:\/\/totp\//);
    expect(new URL(pending.otpauth_url).searchParams.get('secret')).toBe(pending.secret);
    expect((await status(home)).enrolled_methods).toEqual([]);

    const wrong = await svcctl(home, ['sudo', 'totp', 'enroll', '--code', totp(pending.secret, 5)]);
    expect(wrong.code).toBe(ExitCode.invalid);

    const finish = await svcctl(home, [
      'sudo',
      'totp',
      'enroll',
      '--code',
      totp(pending.secret),
      '-o',
      'json',
    ]);
    expect(finish.stderr).toBe('');
    expect(finish.code).toBe(0);
    const { elevated_until: until } = JSON.parse(finish.stdout) as { elevated_until: string };
    expect((await saved(home))!.elevated_until).toBe(until);
    expect(await status(home)).toMatchObject({ is_elevated: true, enrolled_methods: ['totp'] });

    expect((await svcctl(home, ['sudo', 'exit', '-q'])).code).toBe(0);
    // The enrolling code is spent: the next step's code (one step of drift is allowed) elevates.
    const used = await svcctl(home, ['sudo', 'totp', 'verify', '--code', totp(pending.secret)]);
    expect(used.code).toBe(ExitCode.invalid);
    const verify = await svcctl(home, ['sudo', 'totp', 'verify', '--code', totp(pending.secret, 1)]);
    expect(verify.code).toBe(0);
    expect(verify.stderr).toMatch(/^Elevated until .* \(profile "default"\)/);
    expect(await status(home)).toMatchObject({ is_elevated: true });
  });

  it.skipIf(!hasScript)(
    'enroll on a terminal shows a QR code and the otpauth URL, then asks for the code',
    async () => {
      const home = await signedIn('totp-tty');
      const tty = converse(['sudo', 'totp', 'enroll'], { terminal: true, env: env(home) });
      await tty.waitFor('Code from your authenticator app: ');
      const shown = tty.output();
      const url = /URL: +(otpauth:\/\/totp\/\S+)/.exec(shown)?.[1];
      expect(url).toBeDefined();
      const secret = new URL(url!).searchParams.get('secret')!;
      expect(shown).toContain(`secret:  ${secret}`);
      // qrcode's terminal rendering: half blocks, in reverse video.
      expect(shown).toMatch(/[▀▄█]{10,}/);
      tty.type(`${totp(secret)}\n`);
      expect(await tty.exit).toBe(0);
      expect(tty.output()).toMatch(/Elevated until .* \(profile "default"\)/);
      expect(await status(home)).toMatchObject({ is_elevated: true, enrolled_methods: ['totp'] });
    },
  );

  it('through pipes: no QR code, the URL and the code read from stdin; a wrong code exits 5', async () => {
    const home = await signedIn('totp-piped');
    const piped = converse(['sudo', 'totp', 'enroll'], { terminal: false, env: env(home) });
    await piped.waitFor('Code from your authenticator app: ');
    expect(piped.stderr()).not.toMatch(/[▀▄█]/);
    const secret = /secret: +([A-Z2-7]+)/.exec(piped.stderr())![1]!;
    piped.type(`${totp(secret)}\n`);
    piped.end();
    expect(await piped.exit).toBe(0);
    expect(piped.stdout()).toBe('');

    expect((await svcctl(home, ['sudo', 'exit', '-q'])).code).toBe(0);
    const wrong = await svcctl(home, ['sudo', 'totp', 'verify'], { input: '000000\n' });
    expect(wrong.code).toBe(ExitCode.invalid);
    expect(wrong.stderr).toContain('Code from your authenticator app: ');
    const right = await svcctl(home, ['sudo', 'totp', 'verify'], { input: `${totp(secret, 1)}\n` });
    expect(right.code).toBe(0);
    expect((await saved(home))!.elevated_until).toEqual(expect.any(String));
  });
});
