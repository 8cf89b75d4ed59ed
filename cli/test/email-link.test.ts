import { describe, expect, it } from 'vitest';
import { tokenFromLink } from '../src/email-link.js';

describe('tokenFromLink', () => {
  it.each([
    ['a bare token', { given: 'AbC-123_xyz', want: 'AbC-123_xyz' }],
    ['a bare token with spaces around', { given: '  AbC-123_xyz\n', want: 'AbC-123_xyz' }],
    [
      'a verification link',
      { given: 'http://127.0.0.1:8080/auth/verify-email?token=AbC-123_xyz', want: 'AbC-123_xyz' },
    ],
    [
      'a reset link on a dashboard',
      { given: 'https://app.example.com/auth/reset-password?token=Zz9', want: 'Zz9' },
    ],
    [
      'a link as quoted-printable wrote it',
      { given: 'http://127.0.0.1:8080/auth/verify-email?token=3DAbC-1=\n23_xyz', want: 'AbC-123_xyz' },
    ],
  ] as const)('%s', (_name, { given, want }) => {
    expect(tokenFromLink(given)).toBe(want);
  });

  it('refuses a link without a token', () => {
    expect(() => tokenFromLink('http://127.0.0.1:8080/auth/verify-email')).toThrow('the link has no token=');
  });
});
