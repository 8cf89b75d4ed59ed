// Profiles, config.yaml and credentials.yaml, always in temporary directories.
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { operations } from '../../../generated/operations.js';
import { writeCredentials } from '../../src/credentials.js';
import { ExitCode } from '../../src/exit-codes.js';
import { ensureBuilt } from '../support/build.js';
import { closedPort, runCli, tempDir, tempHome } from '../support/run-cli.js';

// Records each request's headers and answers a small JSON object.
let stub: Server;
let stubUrl: string;
const seen: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  ensureBuilt();
  stub = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ mail: true, web_push: false }));
    });
  });
  stub.listen(0, '127.0.0.1');
  await once(stub, 'listening');
  stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
}, 180_000);
afterAll(() => new Promise((r) => stub.close(r)));

const lastRequest = () => seen[seen.length - 1]!;

describe('svcctl config', () => {
  it('sets a base URL per profile and uses it for requests', async () => {
    const home = tempHome();
    const set = await runCli(['config', 'set', 'base-url', `${stubUrl}/api/v2/`, '--profile', 'staging'], {
      env: home,
    });
    expect(set.code).toBe(0);
    const file = parseYaml(readFileSync(join(home.SVCCTL_CONFIG_DIR, 'config.yaml'), 'utf8'));
    expect(file).toEqual({ profiles: { staging: { base_url: stubUrl } } });

    const get = await runCli(['config', 'get', 'base-url', '--profile', 'staging'], { env: home });
    expect(get).toMatchObject({ code: 0, stdout: `${stubUrl}\n` });

    const call = await runCli(['public', 'capabilities'], { env: { ...home, SVCCTL_PROFILE: 'staging' } });
    expect(call.code).toBe(0);
    expect(JSON.parse(call.stdout)).toEqual({ mail: true, web_push: false });
    expect(lastRequest().url).toBe('/api/v2/public/capabilities');
  });

  it('lets --base-url and SVCCTL_BASE_URL override the profile', async () => {
    const home = tempHome();
    const closed = `http://127.0.0.1:${await closedPort()}`;
    await runCli(['config', 'set', 'base-url', closed], { env: home });
    const byEnv = await runCli(['public', 'capabilities'], { env: { ...home, SVCCTL_BASE_URL: stubUrl } });
    expect(byEnv.code).toBe(0);
    const byFlag = await runCli(['--base-url', stubUrl, 'public', 'capabilities'], {
      env: { ...home, SVCCTL_BASE_URL: closed },
    });
    expect(byFlag.code).toBe(0);
    const fromProfile = await runCli(['public', 'capabilities'], { env: home });
    expect(fromProfile.code).toBe(ExitCode.network);
  });

  it('sets the output format per profile', async () => {
    const home = tempHome();
    await runCli(['config', 'set', 'output', 'yaml'], { env: { ...home } });
    const r = await runCli(['public', 'capabilities', '--base-url', stubUrl], { env: home });
    expect(parseYaml(r.stdout)).toEqual({ mail: true, web_push: false });
    expect(r.stdout.trimStart().startsWith('{')).toBe(false);
    const bad = await runCli(['config', 'set', 'output', 'xml'], { env: home });
    expect(bad.code).toBe(ExitCode.usage);
    expect(bad.stderr).toContain('output must be one of table, json, yaml');
  });

  it('lists profiles from both files, marking the current one', async () => {
    const home = tempHome();
    await runCli(['config', 'set', 'base-url', 'https://api.example.com', '--profile', 'prod'], {
      env: home,
    });
    await writeCredentials('ci', { token: 'svc_pat_x_y' }, home.SVCCTL_CONFIG_DIR);
    const r = await runCli(['config', 'profiles', '--profile', 'prod'], { env: home });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([
      { name: 'ci', current: false, base_url: null, output: null, credentials: true },
      { name: 'prod', current: true, base_url: 'https://api.example.com', output: null, credentials: false },
    ]);
    const table = await runCli(['config', 'profiles', '-o', 'table'], { env: home });
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+CURRENT\s+BASE_URL\s+OUTPUT\s+CREDENTIALS$/);
    expect(table.stdout).toMatch(/^default\s+true\s+-\s+-\s+false$/m);
  });

  it('shows the effective settings without revealing the token', async () => {
    const home = tempHome();
    const r = await runCli(['config', 'get', '--token', 'svc_pat_secret'], {
      env: { ...home, SVCCTL_PROFILE: 'dev' },
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      profile: 'dev',
      base_url: 'http://127.0.0.1:8080',
      output: 'json',
      token: 'set (from --token)',
      config_dir: home.SVCCTL_CONFIG_DIR,
    });
    expect(r.stdout).not.toContain('svc_pat_secret');
    // `config show` is the same view; every word `svcctl config --help` lists runs.
    const show = await runCli(['config', 'show', '--token', 'svc_pat_secret', '-o', 'yaml'], {
      env: { ...home, SVCCTL_PROFILE: 'dev' },
    });
    expect(show.code, show.stderr).toBe(0);
    expect(parseYaml(show.stdout)).toEqual({ ...JSON.parse(r.stdout), output: 'yaml' });
    const help = await runCli(['config', '--help']);
    const words = [...help.stdout.matchAll(/^ {2}([a-z]+)\b/gm)].map((m) => m[1]!);
    expect(words).toEqual(expect.arrayContaining(['show', 'get', 'set', 'unset', 'profiles']));
    for (const word of words) {
      expect((await runCli(['config', word, '--help'])).code).toBe(0);
    }
    const root = await runCli(['--help']);
    expect(root.stdout).toMatch(/^ {2}config <command> +show, get, set, unset/m);
  });

  it.each([
    ['an unknown key', ['config', 'set', 'colour', 'blue'], /unknown setting "colour"/],
    ['a base URL that is not a URL', ['config', 'set', 'base-url', 'example.com'], /not an absolute URL/],
    ['a missing value', ['config', 'set', 'base-url'], /missing required argument 'VALUE'/],
  ])('refuses %s (exit 2) and writes nothing', async (_name, args, message) => {
    const home = tempHome();
    const r = await runCli(args, { env: home });
    expect(r.code).toBe(ExitCode.usage);
    expect(r.stderr).toMatch(message);
    expect(existsSync(join(home.SVCCTL_CONFIG_DIR, 'config.yaml'))).toBe(false);
  });

  it('reports a broken config.yaml (exit 1)', async () => {
    const home = tempHome();
    await runCli(['config', 'set', 'output', 'json'], { env: home });
    writeFileSync(join(home.SVCCTL_CONFIG_DIR, 'config.yaml'), 'profiles: [unclosed');
    const r = await runCli(['public', 'capabilities', '--base-url', stubUrl], { env: home });
    expect(r.code).toBe(ExitCode.failure);
    expect(r.stderr).toContain('config.yaml is not valid YAML');
  });
});

describe('the config directory', () => {
  it('is $XDG_CONFIG_HOME/svcctl without SVCCTL_CONFIG_DIR', async () => {
    const xdg = tempDir();
    const r = await runCli(['config', 'set', 'output', 'yaml'], {
      env: { SVCCTL_CONFIG_DIR: undefined, XDG_CONFIG_HOME: xdg },
    });
    expect(r.code).toBe(0);
    expect(existsSync(join(xdg, 'svcctl', 'config.yaml'))).toBe(true);
  });

  it('is ~/.config/svcctl without either', async () => {
    const home = tempDir();
    const r = await runCli(['config', 'set', 'output', 'yaml'], {
      env: { SVCCTL_CONFIG_DIR: undefined, HOME: home },
    });
    expect(r.code).toBe(0);
    expect(existsSync(join(home, '.config', 'svcctl', 'config.yaml'))).toBe(true);
  });
});

describe('credentials', () => {
  it("sends the profile's token from credentials.yaml, and --token / SVCCTL_TOKEN win over it", async () => {
    const home = tempHome();
    await writeCredentials('default', { token: 'svc_pat_from_file' }, home.SVCCTL_CONFIG_DIR);
    const env = { ...home, SVCCTL_BASE_URL: stubUrl };
    await runCli(['public', 'capabilities'], { env });
    expect(lastRequest().headers.authorization).toBe('Bearer svc_pat_from_file');
    await runCli(['public', 'capabilities'], { env: { ...env, SVCCTL_TOKEN: 'svc_pat_env' } });
    expect(lastRequest().headers.authorization).toBe('Bearer svc_pat_env');
    await runCli(['--token', 'svc_pat_flag', 'public', 'capabilities'], {
      env: { ...env, SVCCTL_TOKEN: 'svc_pat_env' },
    });
    expect(lastRequest().headers.authorization).toBe('Bearer svc_pat_flag');
    await runCli(['public', 'capabilities', '--profile', 'other'], { env });
    expect(lastRequest().headers.authorization).toBeUndefined();
    expect(lastRequest().headers['user-agent']).toMatch(/^svcctl\/0\.1\.0 /);
  });

  // authPasswordVerify takes { token }: the mail's token, not the API token.
  const hasVerify = Object.values(operations).some((op) => op.operationId === 'authPasswordVerify');
  it.skipIf(!hasVerify)(
    'keeps a body field named token apart from the API token given before the command words',
    async () => {
      const r = await runCli(
        ['--token', 'svc_pat_auth', 'auth', 'password', 'verify', '--token', 'mail-token'],
        {
          env: { SVCCTL_BASE_URL: stubUrl },
        },
      );
      expect(r.code).toBe(0);
      expect(lastRequest().url).toBe('/api/v2/auth/password/verify');
      expect(lastRequest().headers.authorization).toBe('Bearer svc_pat_auth');
      expect(JSON.parse(lastRequest().body)).toEqual({ token: 'mail-token' });
    },
  );

  it('tightens a credentials file that others can read, before using it', async () => {
    const home = tempHome();
    await writeCredentials('default', { token: 'svc_pat_t' }, home.SVCCTL_CONFIG_DIR);
    const file = join(home.SVCCTL_CONFIG_DIR, 'credentials.yaml');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    chmodSync(file, 0o644);
    const r = await runCli(['public', 'capabilities', '--base-url', stubUrl], { env: home });
    expect(r.code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});
