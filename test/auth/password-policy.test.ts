import { describe, expect, it } from 'vitest';
import { checkPasswordPolicy, type PasswordPolicyReason } from '../../server/src/auth/crypto/passwords.js';

type Context = { email?: string; name?: string };
type Want = PasswordPolicyReason | 'ok';

const decomposedE = 'e\u0301'; // "é" as two code points; NFC makes it one
const emoji = '\u{1F511}'; // two UTF-16 units, one code point

const cases: [string, { given: { password: string; context?: Context }; want: Want }][] = [
  ['eight characters', { given: { password: 'vq7-lake' }, want: 'ok' }],
  ['a long passphrase', { given: { password: 'correct horse battery staple' }, want: 'ok' }],
  ['seven characters', { given: { password: 'vq7-lak' }, want: 'too_short' }],
  ['empty', { given: { password: '' }, want: 'too_short' }],
  [
    'eight UTF-16 units but four characters after NFC',
    { given: { password: decomposedE.repeat(4) }, want: 'too_short' },
  ],
  ['eight decomposed characters', { given: { password: decomposedE.repeat(8) }, want: 'ok' }],
  ['four emoji are four characters, not eight', { given: { password: emoji.repeat(4) }, want: 'too_short' }],
  ['spaces count and are kept', { given: { password: '        ' }, want: 'ok' }],
  ['1024 characters', { given: { password: 'x'.repeat(1023) + 'y' }, want: 'ok' }],
  ['1024 emoji (2048 UTF-16 units)', { given: { password: emoji.repeat(1024) }, want: 'ok' }],
  ['1025 characters', { given: { password: 'x'.repeat(1025) }, want: 'too_long' }],
  ['a common password', { given: { password: 'password1' }, want: 'common' }],
  ['a common password in other case', { given: { password: 'PassWord1' }, want: 'common' }],
  ['a common digit run', { given: { password: '12345678' }, want: 'common' }],
  ['a common password with a suffix', { given: { password: 'password1!x' }, want: 'ok' }],
  [
    'the email address',
    {
      given: { password: 'alice.smith@example.com', context: { email: 'alice.smith@example.com' } },
      want: 'contains_email',
    },
  ],
  [
    'the email address in other case',
    {
      given: { password: 'Alice.Smith@Example.com', context: { email: 'alice.smith@example.com' } },
      want: 'contains_email',
    },
  ],
  [
    'the local part of the address',
    {
      given: { password: 'alice.smith', context: { email: 'alice.smith@example.com' } },
      want: 'contains_email',
    },
  ],
  [
    'the local part with more',
    { given: { password: 'alice.smith-42', context: { email: 'alice.smith@example.com' } }, want: 'ok' },
  ],
  [
    'the account name',
    {
      given: { password: 'margaret hamilton', context: { name: 'Margaret Hamilton' } },
      want: 'contains_email',
    },
  ],
  ['no context given', { given: { password: 'alice.smith' }, want: 'ok' }],
  [
    'too short wins over the email rule',
    { given: { password: 'bob', context: { email: 'bob@example.com' } }, want: 'too_short' },
  ],
];

describe('checkPasswordPolicy', () => {
  it.each(cases)('%s', (_name, { given, want }) => {
    const result = checkPasswordPolicy(given.password, given.context);
    if (want === 'ok') {
      expect(result).toEqual({ ok: true });
    } else {
      expect(result).toMatchObject({ ok: false, reason: want });
      expect(result.ok === false && result.message.length > 0).toBe(true);
    }
  });

  it('names the limits in its messages', () => {
    expect(checkPasswordPolicy('short')).toMatchObject({ message: expect.stringContaining('8') });
    expect(checkPasswordPolicy('x'.repeat(2000))).toMatchObject({ message: expect.stringContaining('1024') });
  });
});
