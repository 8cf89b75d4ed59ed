// svcctl and OAuth against the real server and a real OpenID provider on loopback: `svcctl login
// --provider` (the URL printed, the loopback redirect, the key redeemed, the session saved), the
// errors a browser can come back with, `svcctl oauth providers`, `oauth accounts list|unlink` and
// `oauth complete`. The browser is played with fetch (test/support/oidc.ts); none is opened.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { arrive, DASHBOARD_CALLBACK, startWorld, type World } from '../../../test/oauth/harness.js';
import { ExitCode } from '../../src/exit-codes.js';
import { CLI_BIN, ensureBuilt } from '../support/build.js';
import { closedPort, runCli, tempHome, type CliResult, type CliRun } from '../support/run-cli.js';

let w: World;
let redirectUri: string;

beforeAll(async () => {
  ensureBuilt();
  redirectUri = `http://127.0.0.1:${await closedPort()}/callback`;
  w = await startWorld({ env: { OAUTH_REDIRECT_ALLOWLIST: [DASHBOARD_CALLBACK, redirectUri].join(',') } });
}, 180_000);
afterAll(async () => {
  await w?.close();
});

type Home = ReturnType<typeof tempHome>;
const envOf = (home: Home): Record<string, string> => ({
  ...home,
  SVCCTL_BASE_URL: w.app.baseUrl,
  SVCCTL_NO_BROWSER: '1',
});
const svcctl = (home: Home, args: string[], run: CliRun = {}) =>
  runCli(args, { ...run, env: { ...envOf(home), ...run.env } });

async function saved(home: Home): Promise<{ token?: string; session_id?: string } | undefined> {
  const text = await readFile(join(home.SVCCTL_CONFIG_DIR, 'credentials.yaml'), 'utf8').catch(() => '');
  return ((parseYaml(text) ?? {}) as { profiles?: Record<string, { token?: string; session_id?: string }> })
    .profiles?.default;
}

/**
 * `svcctl login --provider idp`, with a person signing in at the provider as `subject` once svcctl
 * has printed the URL: the browser goes provider → the server's callback → svcctl's loopback redirect.
 */
async function loginWithProvider(
  home: Home,
  subject: string,
  extra: string[] = [],
): Promise<CliResult & { page: string }> {
  const child = spawn(
    process.execPath,
    [CLI_BIN, 'login', '--provider', 'idp', '--redirect-uri', redirectUri, ...extra],
    {
      env: { PATH: process.env.PATH ?? '', ...envOf(home) },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  child.stdin.end();
  const exited = new Promise<number | null>((resolve) => child.on('close', (c: number | null) => resolve(c)));
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
      const m = new RegExp(`(${w.idp.issuer.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\S+)`).exec(stderr);
      if (m) resolve(m[1]!);
    });
    child.on('close', () => reject(new Error(`svcctl ended before printing the URL: ${stderr}`)));
  });
  const callback = await w.idp.authorize(url, { subject });
  const answer = await arrive(w.app, callback);
  expect(answer.status).toBe(307);
  // The browser follows the redirect to svcctl's listener.
  expect(answer.location!.href.startsWith(`${redirectUri}?`)).toBe(true);
  const page = await (await fetch(answer.location!)).text();
  const code = await exited;
  return { code, stdout, stdoutBytes: Buffer.from(stdout), stderr, page };
}

let n = 0;
const person = (claims: Record<string, unknown> = {}) => {
  const subject = `cli-${(n += 1)}-${Date.now().toString(36)}`;
  w.idp.accounts.set(subject, {
    email: `${subject}@idp.example.test`,
    email_verified: true,
    name: 'Cli Person',
    ...claims,
  });
  return subject;
};

describe('svcctl oauth providers', () => {
  it('lists the providers offered', async () => {
    const r = await svcctl(tempHome(), ['oauth', 'providers', '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      { id: 'idp', display_name: 'Test Identity' },
      { id: 'spare', display_name: null },
    ]);
  });
});

describe('svcctl login --provider', () => {
  it('prints the URL, takes the browser back on loopback, saves the session; then the session works', async () => {
    const home = tempHome();
    const subject = person();
    const r = await loginWithProvider(home, subject);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('Sign in with idp in your browser');
    expect(r.stderr).toContain(`Signed in as Cli Person <${subject}@idp.example.test>`);
    expect(r.page).toContain('Signed in to svcctl');
    expect(r.stdout).toBe('');
    const creds = await saved(home);
    expect(creds?.token).toBeTruthy();

    const me = await svcctl(home, ['me', 'show', '-o', 'json']);
    expect(me.code, me.stderr).toBe(0);
    expect(JSON.parse(me.stdout)).toMatchObject({ email: `${subject}@idp.example.test` });
    const accounts = await svcctl(home, ['oauth', 'accounts', 'list', '-o', 'json']);
    expect(JSON.parse(accounts.stdout)).toMatchObject([{ provider_id: 'idp', has_avatar: false }]);

    // The only way into this account: unlinking it is refused (exit 6, the rule named).
    const unlink = await svcctl(home, ['oauth', 'accounts', 'unlink', 'idp']);
    expect(unlink.code).toBe(ExitCode.conflict);
    expect(unlink.stderr).toContain('last-sign-in-method');
  });

  it('--non-interactive prints the session summary as JSON, never a token', async () => {
    const home = tempHome();
    const r = await loginWithProvider(home, person(), ['--non-interactive']);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(summary).sort()).toEqual(['profile', 'session_id', 'user']);
    expect(r.stdout).not.toContain((await saved(home))!.token!);
  });

  it('a browser that comes back with an error: exit 4, the reason said, nothing saved', async () => {
    const home = tempHome();
    const r = await loginWithProvider(home, person({ email: null }));
    expect(r.code).toBe(ExitCode.auth);
    expect(r.stderr).toContain('email_required');
    expect(r.page).toContain('did not succeed');
    expect(await saved(home)).toBeUndefined();
  });

  it('refuses a redirect that is not a loopback URL with a port, and --provider with a password', async () => {
    const home = tempHome();
    const bad = await svcctl(home, [
      'login',
      '--provider',
      'idp',
      '--redirect-uri',
      'https://example.com/cb',
    ]);
    expect(bad.code).toBe(ExitCode.usage);
    const mixed = await svcctl(home, ['login', '--provider', 'idp', '--email', 'a@example.test']);
    expect(mixed.code).toBe(ExitCode.usage);
  });

  it('a provider not offered: exit 3', async () => {
    const r = await svcctl(tempHome(), ['login', '--provider', 'nobody', '--redirect-uri', redirectUri]);
    expect(r.code).toBe(ExitCode.notFound);
  });
});

describe('svcctl oauth complete', () => {
  it('refuses an unknown key with exit 4 and saves nothing', async () => {
    const home = tempHome();
    const r = await svcctl(home, ['oauth', 'complete', '--key', 'not-a-key']);
    expect(r.code).toBe(ExitCode.auth);
    expect(await saved(home)).toBeUndefined();
  });
});
