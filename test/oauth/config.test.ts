// OAUTH_PROVIDERS and OAUTH_REDIRECT_ALLOWLIST (DECISIONS.md §5): read once at start, every problem named.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/src/config.js';

const base = { DATA_DIR: '/tmp/unused' };
const provider = {
  id: 'google',
  display_name: 'Google',
  issuer: 'https://accounts.google.com',
  client_id: 'id',
  client_secret: 'secret',
};
const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig({ ...base, ...env });
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
};

describe('OAUTH_PROVIDERS', () => {
  it('reads providers with their defaults', () => {
    const config = loadConfig({
      ...base,
      OAUTH_PROVIDERS: JSON.stringify([
        provider,
        { ...provider, id: 'shop', display_name: null, hosts: ['Shop.Example'], scopes: ['openid'] },
      ]),
    });
    expect(config.oauthProviders).toEqual([
      {
        id: 'google',
        displayName: 'Google',
        issuer: 'https://accounts.google.com',
        clientId: 'id',
        clientSecret: 'secret',
        scopes: ['openid', 'email', 'profile'],
        hosts: null,
      },
      {
        id: 'shop',
        displayName: null,
        issuer: 'https://accounts.google.com',
        clientId: 'id',
        clientSecret: 'secret',
        scopes: ['openid'],
        hosts: ['shop.example'],
      },
    ]);
  });

  it.each([
    ['not JSON', '[{'],
    ['not an array', JSON.stringify(provider)],
    ['a bad id', JSON.stringify([{ ...provider, id: 'Google!' }])],
    ['a reserved id', JSON.stringify([{ ...provider, id: 'accounts' }])],
    ['an id twice', JSON.stringify([provider, provider])],
    ['an http issuer off loopback', JSON.stringify([{ ...provider, issuer: 'http://accounts.example' }])],
    ['no client secret', JSON.stringify([{ ...provider, client_secret: '' }])],
    ['scopes without openid', JSON.stringify([{ ...provider, scopes: ['email'] }])],
    ['empty hosts', JSON.stringify([{ ...provider, hosts: [] }])],
  ])('refuses %s', (_name, value) => {
    expect(problemsOf({ OAUTH_PROVIDERS: value })).toEqual([expect.stringMatching(/^OAUTH_PROVIDERS/)]);
  });

  it('allows an http issuer on loopback (a provider on this machine)', () => {
    expect(
      problemsOf({ OAUTH_PROVIDERS: JSON.stringify([{ ...provider, issuer: 'http://127.0.0.1:9000' }]) }),
    ).toEqual([]);
  });
});

describe('OAUTH_REDIRECT_ALLOWLIST', () => {
  it('defaults to the dashboard origin + /auth/callback', () => {
    expect(loadConfig({ ...base, DASHBOARD_URL: 'https://dash.example/app' }).oauthRedirectAllowlist).toEqual(
      ['https://dash.example/auth/callback'],
    );
  });

  it('keeps entries exactly as written, and refuses userinfo or a fragment', () => {
    expect(
      loadConfig({
        ...base,
        OAUTH_REDIRECT_ALLOWLIST: 'https://a.example/cb, http://127.0.0.1:8976/callback',
      }).oauthRedirectAllowlist,
    ).toEqual(['https://a.example/cb', 'http://127.0.0.1:8976/callback']);
    expect(
      problemsOf({ OAUTH_REDIRECT_ALLOWLIST: 'https://u@a.example/cb,https://a.example/cb#x,ftp://a' }),
    ).toHaveLength(3);
  });
});
