import { describe, expect, it } from 'vitest';
import { configDir } from '../src/config-dir.js';
import { updateProfileConfig } from '../src/config-file.js';
import { writeCredentials } from '../src/credentials.js';
import { UsageError } from '../src/errors.js';
import { DEFAULT_BASE_URL, normalizeBaseUrl, resolveSettings } from '../src/settings.js';
import { tempDir } from './support/run-cli.js';

const dir = () => tempDir('svcctl-settings-');

describe('normalizeBaseUrl', () => {
  it.each([
    ['https://api.example.com', 'https://api.example.com'],
    ['https://api.example.com/', 'https://api.example.com'],
    ['https://api.example.com/api/v2', 'https://api.example.com'],
    ['https://api.example.com/api/v2/', 'https://api.example.com'],
    ['http://127.0.0.1:8080/prefix/', 'http://127.0.0.1:8080/prefix'],
  ])('%s → %s', (given, want) => {
    expect(normalizeBaseUrl(given)).toBe(want);
  });

  it.each(['api.example.com', 'ftp://example.com'])('refuses %s', (given) => {
    expect(() => normalizeBaseUrl(given)).toThrow(UsageError);
  });
});

describe('configDir', () => {
  it.each([
    ['SVCCTL_CONFIG_DIR first', { SVCCTL_CONFIG_DIR: '/c', XDG_CONFIG_HOME: '/x', HOME: '/h' }, '/c'],
    ['then XDG_CONFIG_HOME', { XDG_CONFIG_HOME: '/x', HOME: '/h' }, '/x/svcctl'],
    ['a relative XDG_CONFIG_HOME is ignored', { XDG_CONFIG_HOME: 'rel', HOME: '/h' }, '/h/.config/svcctl'],
    ['then ~/.config', { HOME: '/h' }, '/h/.config/svcctl'],
  ])('%s', (_name, env, want) => {
    expect(configDir(env)).toBe(want);
  });
});

describe('resolveSettings', () => {
  it('falls back to the built-in defaults', async () => {
    const d = dir();
    expect(await resolveSettings({}, { env: { SVCCTL_CONFIG_DIR: d }, stdoutIsTTY: true })).toEqual({
      profile: 'default',
      baseUrl: DEFAULT_BASE_URL,
      token: undefined,
      tokenSource: null,
      session: null,
      outputFormat: 'table',
      quiet: false,
      configDir: d,
    });
  });

  it('ranks flag over environment over profile over default', async () => {
    const d = dir();
    await updateProfileConfig(d, 'p', 'base_url', 'https://profile.example');
    await updateProfileConfig(d, 'p', 'output', 'yaml');
    await writeCredentials('p', { token: 'file-token' }, d);
    const env = { SVCCTL_CONFIG_DIR: d, SVCCTL_PROFILE: 'p' };
    const fromProfile = await resolveSettings({}, { env, stdoutIsTTY: false });
    expect(fromProfile).toMatchObject({
      profile: 'p',
      baseUrl: 'https://profile.example',
      outputFormat: 'yaml',
      token: 'file-token',
      tokenSource: 'credentials.yaml',
    });
    const fromEnv = await resolveSettings(
      {},
      {
        env: {
          ...env,
          SVCCTL_BASE_URL: 'https://env.example',
          SVCCTL_OUTPUT: 'json',
          SVCCTL_TOKEN: 'env-token',
        },
      },
    );
    expect(fromEnv).toMatchObject({
      baseUrl: 'https://env.example',
      outputFormat: 'json',
      token: 'env-token',
      tokenSource: 'SVCCTL_TOKEN',
    });
    const fromFlags = await resolveSettings(
      { baseUrl: 'https://flag.example/api/v2', outputFormat: 'table', token: 'flag-token', profile: 'p' },
      { env: { ...env, SVCCTL_BASE_URL: 'https://env.example', SVCCTL_TOKEN: 'env-token' } },
    );
    expect(fromFlags).toMatchObject({
      baseUrl: 'https://flag.example',
      outputFormat: 'table',
      token: 'flag-token',
      tokenSource: '--token',
    });
  });

  it('has the saved session when the token comes from it, and none for --token or SVCCTL_TOKEN', async () => {
    const d = dir();
    await writeCredentials('default', { token: 'jwt', refresh_token: 'svc_rt_1', session_id: 'sid' }, d);
    const env = { SVCCTL_CONFIG_DIR: d };
    expect(await resolveSettings({}, { env })).toMatchObject({
      token: 'jwt',
      tokenSource: 'credentials.yaml',
      session: { token: 'jwt', refreshToken: 'svc_rt_1', sessionId: 'sid' },
    });
    expect(await resolveSettings({ token: 'svc_pat_x' }, { env })).toMatchObject({
      token: 'svc_pat_x',
      session: null,
    });
    expect(await resolveSettings({}, { env: { ...env, SVCCTL_TOKEN: 'svc_pat_y' } })).toMatchObject({
      token: 'svc_pat_y',
      session: null,
    });
    // A saved API token is sent as it is.
    await writeCredentials('default', { token: 'svc_pat_saved' }, d);
    expect(await resolveSettings({}, { env })).toMatchObject({ token: 'svc_pat_saved', session: null });
  });

  it('refuses a bad SVCCTL_OUTPUT', async () => {
    await expect(
      resolveSettings({}, { env: { SVCCTL_CONFIG_DIR: dir(), SVCCTL_OUTPUT: 'xml' } }),
    ).rejects.toThrow(UsageError);
  });
});
