// redirect_to is compared character for character; outcomes ride in its query (redirect.ts).
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { requireAllowedRedirect, wantsJson, withOutcome } from './redirect.js';

const config = loadConfig({ PUBLIC_BASE_URL: 'https://app.example.com', DATA_DIR: '/tmp/unused' });

describe('requireAllowedRedirect', () => {
  it('defaults to the dashboard origin + /auth/callback and accepts exactly it', () => {
    expect(config.oauthRedirectAllowlist).toEqual(['https://app.example.com/auth/callback']);
    expect(requireAllowedRedirect(config, 'https://app.example.com/auth/callback')).toBe(
      'https://app.example.com/auth/callback',
    );
  });

  it.each([
    'https://app.example.com/auth/callback/',
    'https://app.example.com/auth/callbackx',
    'https://APP.example.com/auth/callback',
    'https://app.example.com:443/auth/callback',
    'https://x@app.example.com/auth/callback',
    'https://app.example.com/auth%2Fcallback',
    'https:\\\\app.example.com\\auth\\callback',
  ])('refuses %s', (given) => {
    expect(() => requireAllowedRedirect(config, given)).toThrow(
      expect.objectContaining({ code: 'invalid-field-value' }),
    );
  });
});

describe('withOutcome', () => {
  it('adds the outcome to the query, keeping what is there', () => {
    expect(withOutcome('https://a.example/cb?tab=2', { key: 'K' })).toBe('https://a.example/cb?tab=2&key=K');
    expect(withOutcome('https://a.example/cb', { error: 'email_conflict' })).toBe(
      'https://a.example/cb?error=email_conflict',
    );
  });
});

describe('wantsJson', () => {
  it.each([
    ['application/json', true],
    ['application/json; charset=utf-8', true],
    ['text/html,application/xhtml+xml,application/json;q=0.9', false],
    ['*/*', false],
    [undefined, false],
  ] as const)('%s: %s', (accept, want) => {
    expect(wantsJson(accept)).toBe(want);
  });
});
