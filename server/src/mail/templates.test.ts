import { describe, expect, it } from 'vitest';
import {
  escapeHtml,
  MAIL_KINDS,
  MAIL_LANGUAGES,
  mailLanguage,
  renderMail,
  type MailData,
  type MailKind,
} from './templates.js';

const SAMPLE: MailData = {
  login_code: { code: '482913', expiresMinutes: 10 },
  verify_email: { link: 'https://app.example.com/auth/verify-email?token=abc' },
  password_reset: { link: 'https://app.example.com/auth/reset?token=def' },
  signup_existing_account: {
    loginLink: 'https://app.example.com/login',
    resetLink: 'https://app.example.com/forgot',
  },
  password_changed: {},
  elevation_pin_locked: { failures: 100 },
  invitation: {
    link: 'https://app.example.com/invitations/5f0c6a52-8f4e-4d3c-9a55-0d6f7d1f2b3a',
    organizationName: 'Acme <Ops> & Co',
    inviterName: 'Ada Lovelace',
    role: 'admin',
    expiresAt: '2026-11-28 12:00 UTC',
  },
};

describe('mailLanguage', () => {
  const cases: [string, { given: string | null | undefined; want: string }][] = [
    ['plain tag', { given: 'de', want: 'de' }],
    ['region subtag is dropped', { given: 'de-AT', want: 'de' }],
    ['underscore separator', { given: 'de_CH', want: 'de' }],
    ['case-insensitive', { given: 'DE-de', want: 'de' }],
    ['surrounding space', { given: ' en-GB ', want: 'en' }],
    ['unshipped language falls back to English', { given: 'fr-FR', want: 'en' }],
    ['script subtag', { given: 'zh-Hant-TW', want: 'en' }],
    ['empty', { given: '', want: 'en' }],
    ['null', { given: null, want: 'en' }],
    ['garbage', { given: '--', want: 'en' }],
  ];
  it.each(cases)('%s', (_name, { given, want }) => {
    expect(mailLanguage(given)).toBe(want);
  });
});

describe('renderMail', () => {
  const cases: [string, { kind: MailKind; language: string; want: { subject: string; text: RegExp[] } }][] = [
    [
      'login code, English',
      {
        kind: 'login_code',
        language: 'en-US',
        want: {
          subject: 'Your sign-in code',
          text: [/^Your sign-in code is:\n\n482913\n/, /expires in 10 minutes/],
        },
      },
    ],
    [
      'login code, German for de-AT',
      {
        kind: 'login_code',
        language: 'de-AT',
        want: {
          subject: 'Ihr Anmeldecode',
          text: [/Ihr Anmeldecode lautet:\n\n482913\n/, /10 Minuten gültig/],
        },
      },
    ],
    [
      'verify email, English',
      {
        kind: 'verify_email',
        language: 'en',
        want: {
          subject: 'Confirm your email address',
          text: [/\nhttps:\/\/app\.example\.com\/auth\/verify-email\?token=abc\n/],
        },
      },
    ],
    [
      'verify email, German',
      {
        kind: 'verify_email',
        language: 'de',
        want: {
          subject: 'Bestätigen Sie Ihre E-Mail-Adresse',
          text: [/verify-email\?token=abc/, /bestätigen/],
        },
      },
    ],
    [
      'password reset, English',
      {
        kind: 'password_reset',
        language: 'en',
        want: { subject: 'Reset your password', text: [/reset\?token=def/] },
      },
    ],
    [
      'password reset, German',
      {
        kind: 'password_reset',
        language: 'de',
        want: { subject: 'Passwort zurücksetzen', text: [/reset\?token=def/, /unverändert/] },
      },
    ],
    [
      'signup with an existing address, English',
      {
        kind: 'signup_existing_account',
        language: 'en',
        want: {
          subject: 'Sign-up attempt with your email address',
          text: [
            /already have one/,
            /\nhttps:\/\/app\.example\.com\/login\n/,
            /\nhttps:\/\/app\.example\.com\/forgot\n/,
          ],
        },
      },
    ],
    [
      'signup with an existing address, German',
      {
        kind: 'signup_existing_account',
        language: 'de',
        want: {
          subject: 'Registrierungsversuch mit Ihrer E-Mail-Adresse',
          text: [/bereits eines/, /\/login/, /\/forgot/],
        },
      },
    ],
    [
      'password changed, English',
      {
        kind: 'password_changed',
        language: 'en',
        want: { subject: 'Your password was changed', text: [/just changed/] },
      },
    ],
    [
      'password changed, German, unknown language falls back to English',
      {
        kind: 'password_changed',
        language: 'fr',
        want: { subject: 'Your password was changed', text: [/just changed/] },
      },
    ],
  ];
  it.each(cases)('%s', (_name, { kind, language, want }) => {
    const mail = renderMail(kind, language, SAMPLE[kind]);
    expect(mail.subject).toBe(want.subject);
    for (const pattern of want.text) expect(mail.text).toMatch(pattern);
    expect(mail.html).toContain(`<html lang="${mailLanguage(language)}">`);
  });

  // The subject outlives the bodies in the outbox (kept for audit), so it must never carry a secret.
  it.each(MAIL_KINDS.flatMap((kind) => MAIL_LANGUAGES.map((lang) => [kind, lang] as const)))(
    '%s in %s: subject carries no code or link; text and HTML carry every value',
    (kind, lang) => {
      const mail = renderMail(kind, lang, SAMPLE[kind]);
      const values = Object.values(SAMPLE[kind]).filter((v): v is string => typeof v === 'string');
      for (const value of values) {
        expect(mail.subject).not.toContain(value);
        expect(mail.text).toContain(value);
        expect(mail.html).toContain(escapeHtml(value));
      }
      expect(mail.text.endsWith('\n')).toBe(true);
    },
  );

  it('escapes every interpolated value in the HTML part', () => {
    const hostile = 'https://x.example/?a=1&b="><script>alert(1)</script>\'';
    const link = renderMail('password_reset', 'en', { link: hostile });
    expect(link.html).not.toContain('<script>');
    expect(link.html).toContain(
      'href="https://x.example/?a=1&amp;b=&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&#39;"',
    );
    expect(link.text).toContain(hostile);

    const code = renderMail('login_code', 'de', { code: '<b>1&2</b>', expiresMinutes: 1 });
    expect(code.html).toContain('&lt;b&gt;1&amp;2&lt;/b&gt;');
    expect(code.html).not.toContain('<b>');
    expect(code.text).toContain('1 Minute gültig');
  });

  it.each([
    ['javascript: URL', 'javascript:alert(1)'],
    ['relative link', '/auth/reset?token=x'],
    ['link with a line break', 'https://x.example/\nBcc: victim@example.com'],
  ])('refuses a %s', (_name, value) => {
    expect(() => renderMail('verify_email', 'en', { link: value })).toThrow(/absolute http\(s\) URLs/);
  });
});

describe('escapeHtml', () => {
  const cases: [string, { given: string; want: string }][] = [
    ['all five specials', { given: `<a href="x">&'`, want: '&lt;a href=&quot;x&quot;&gt;&amp;&#39;' }],
    ['already escaped text is escaped again', { given: '&amp;', want: '&amp;amp;' }],
    ['plain text unchanged', { given: 'Grüße 123', want: 'Grüße 123' }],
  ];
  it.each(cases)('%s', (_name, { given, want }) => {
    expect(escapeHtml(given)).toBe(want);
  });
});
