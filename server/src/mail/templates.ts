// The mails of sign-in and account recovery, rendered in the recipient's language. Pure: no I/O, no
// clock. Every interpolated value is HTML-escaped in the HTML part; links are refused unless they are
// http(s), so a caller's mistake can not put a javascript: URL into an href.
//
// Subjects never carry the code or a link: the outbox keeps subjects for audit after the bodies are
// erased (server/migrations/0003_mail_outbox.sql).

export interface MailData {
  login_code: { code: string; expiresMinutes: number };
  verify_email: { link: string };
  password_reset: { link: string };
  /** Sent when someone signs up with an address that already has an account: the owner learns of it
   * while the API answers exactly as for a new address (seed document 1, "Anti-enumeration"). */
  signup_existing_account: { loginLink: string; resetLink: string };
  password_changed: Record<string, never>;
  /** The absolute cap on failed elevation attempts was reached and the PIN is locked (NIST SP 800-63B §5.2.2). */
  elevation_pin_locked: { failures: number };
  /** An invitation into an organization (document 1, "Invitations"); `expiresAt` as `2026-11-28 12:00 UTC`. */
  invitation: { link: string; organizationName: string; inviterName: string; role: string; expiresAt: string };
}

export type MailKind = keyof MailData;

export const MAIL_LANGUAGES = ['en', 'de'] as const;
export type MailLanguage = (typeof MAIL_LANGUAGES)[number];

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

/** The shipped language for a BCP-47-like tag: its primary subtag if we have it, else English. */
export function mailLanguage(tag: string | null | undefined): MailLanguage {
  const primary = (tag ?? '').trim().toLowerCase().split(/[-_]/)[0];
  return MAIL_LANGUAGES.find((l) => l === primary) ?? 'en';
}

export function renderMail<K extends MailKind>(
  kind: K,
  language: string | null | undefined,
  data: MailData[K],
): RenderedMail {
  const lang = mailLanguage(language);
  const render = TEMPLATES[kind][lang] as (d: MailData[K]) => Content;
  const content = render(data);
  return {
    subject: content.subject,
    text: `${content.paragraphs.map((p) => p.map(textOf).join('')).join('\n\n')}\n`,
    html: toHtml(lang, content),
  };
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

// A mail is a subject and paragraphs of pieces; the text and HTML parts are both drawn from it, so the
// two can not say different things.
type Piece = string | { code: string } | { link: string };
interface Content {
  subject: string;
  paragraphs: Piece[][];
}

const code = (value: string): Piece => ({ code: value });
const link = (value: string): Piece => {
  if (!/^https?:\/\/[^\s]+$/i.test(value)) throw new Error('mail links must be absolute http(s) URLs');
  return { link: value };
};

function textOf(piece: Piece): string {
  if (typeof piece === 'string') return piece;
  return 'code' in piece ? piece.code : piece.link;
}

function toHtml(lang: MailLanguage, content: Content): string {
  const paragraphs = content.paragraphs.map((p) => {
    const inner = p
      .map((piece) => {
        if (typeof piece === 'string') return escapeHtml(piece).replace(/\n/g, '<br>\n');
        if ('code' in piece) {
          return `<strong style="font-size:24px;letter-spacing:4px;font-family:monospace">${escapeHtml(piece.code)}</strong>`;
        }
        return `<a href="${escapeHtml(piece.link)}">${escapeHtml(piece.link)}</a>`;
      })
      .join('');
    return `<p>${inner}</p>`;
  });
  return [
    '<!doctype html>',
    `<html lang="${lang}">`,
    '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width"></head>',
    `<body style="font-family:sans-serif;line-height:1.5">`,
    ...paragraphs,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

const minutes = {
  en: (n: number) => `${n} ${n === 1 ? 'minute' : 'minutes'}`,
  de: (n: number) => `${n} ${n === 1 ? 'Minute' : 'Minuten'}`,
};

type Templates = { [K in MailKind]: Record<MailLanguage, (data: MailData[K]) => Content> };

const TEMPLATES: Templates = {
  login_code: {
    en: (d) => ({
      subject: 'Your sign-in code',
      paragraphs: [
        ['Your sign-in code is:'],
        [code(d.code)],
        [`It expires in ${minutes.en(d.expiresMinutes)} and works once.`],
        ['If you did not just try to sign in, someone else knows your password. Change it now.'],
      ],
    }),
    de: (d) => ({
      subject: 'Ihr Anmeldecode',
      paragraphs: [
        ['Ihr Anmeldecode lautet:'],
        [code(d.code)],
        [`Er ist ${minutes.de(d.expiresMinutes)} gültig und nur einmal verwendbar.`],
        [
          'Wenn Sie sich gerade nicht anmelden wollten, kennt jemand anderes Ihr Passwort. Ändern Sie es jetzt.',
        ],
      ],
    }),
  },
  verify_email: {
    en: (d) => ({
      subject: 'Confirm your email address',
      paragraphs: [
        ['Open this link to confirm your email address and finish signing up:'],
        [link(d.link)],
        ['If you did not sign up, ignore this message.'],
      ],
    }),
    de: (d) => ({
      subject: 'Bestätigen Sie Ihre E-Mail-Adresse',
      paragraphs: [
        ['Öffnen Sie diesen Link, um Ihre E-Mail-Adresse zu bestätigen und die Registrierung abzuschließen:'],
        [link(d.link)],
        ['Wenn Sie sich nicht registriert haben, ignorieren Sie diese Nachricht.'],
      ],
    }),
  },
  password_reset: {
    en: (d) => ({
      subject: 'Reset your password',
      paragraphs: [
        ['Someone asked to reset the password of your account. Open this link to choose a new one:'],
        [link(d.link)],
        ['If this was not you, ignore this message; your password stays as it is.'],
      ],
    }),
    de: (d) => ({
      subject: 'Passwort zurücksetzen',
      paragraphs: [
        [
          'Jemand möchte das Passwort Ihres Kontos zurücksetzen. Öffnen Sie diesen Link, um ein neues zu wählen:',
        ],
        [link(d.link)],
        ['Wenn Sie das nicht waren, ignorieren Sie diese Nachricht; Ihr Passwort bleibt unverändert.'],
      ],
    }),
  },
  signup_existing_account: {
    en: (d) => ({
      subject: 'Sign-up attempt with your email address',
      paragraphs: [
        ['Someone, perhaps you, tried to create an account with this email address. You already have one.'],
        ['To sign in, open:', '\n', link(d.loginLink)],
        ['If you forgot your password, reset it here:', '\n', link(d.resetLink)],
        ['If this was not you, ignore this message; nothing has changed.'],
      ],
    }),
    de: (d) => ({
      subject: 'Registrierungsversuch mit Ihrer E-Mail-Adresse',
      paragraphs: [
        [
          'Jemand, vielleicht Sie, wollte mit dieser E-Mail-Adresse ein Konto anlegen. Sie haben bereits eines.',
        ],
        ['Zum Anmelden öffnen Sie:', '\n', link(d.loginLink)],
        ['Wenn Sie Ihr Passwort vergessen haben, setzen Sie es hier zurück:', '\n', link(d.resetLink)],
        ['Wenn Sie das nicht waren, ignorieren Sie diese Nachricht; es hat sich nichts geändert.'],
      ],
    }),
  },
  password_changed: {
    en: () => ({
      subject: 'Your password was changed',
      paragraphs: [
        ['The password of your account was just changed.'],
        ['If this was you, there is nothing to do. If not, reset your password at once and contact support.'],
      ],
    }),
    de: () => ({
      subject: 'Ihr Passwort wurde geändert',
      paragraphs: [
        ['Das Passwort Ihres Kontos wurde soeben geändert.'],
        [
          'Wenn Sie das waren, ist nichts weiter zu tun. Wenn nicht, setzen Sie Ihr Passwort sofort zurück und wenden Sie sich an den Support.',
        ],
      ],
    }),
  },
  elevation_pin_locked: {
    en: (d) => ({
      subject: 'Your elevation PIN was locked',
      paragraphs: [
        [`Someone entered a wrong elevation PIN or code for your account ${d.failures} times in a row, so your PIN has been locked.`],
        ['Sign in again to unlock it. If these attempts were not yours, someone may be using one of your sessions: change your password and end your other sessions.'],
      ],
    }),
    de: (d) => ({
      subject: 'Ihre Bestätigungs-PIN wurde gesperrt',
      paragraphs: [
        [`Für Ihr Konto wurde ${d.failures}-mal hintereinander eine falsche PIN oder ein falscher Code eingegeben; Ihre PIN wurde deshalb gesperrt.`],
        ['Melden Sie sich erneut an, um sie zu entsperren. Waren Sie das nicht, nutzt womöglich jemand eine Ihrer Sitzungen: Ändern Sie Ihr Passwort und beenden Sie Ihre anderen Sitzungen.'],
      ],
    }),
  },
  // The subject names no one: the names are the inviter's own words, and subjects outlive the bodies.
  invitation: {
    en: (d) => ({
      subject: 'You are invited to join an organization',
      paragraphs: [
        [`${d.inviterName} invites you to join ${d.organizationName} as ${d.role}.`],
        ['Sign in with this email address, then open this link to accept or decline:'],
        [link(d.link)],
        [`The invitation expires ${d.expiresAt}. If you do not know the sender, ignore this message.`],
      ],
    }),
    de: (d) => ({
      subject: 'Einladung in eine Organisation',
      paragraphs: [
        [`${d.inviterName} lädt Sie in ${d.organizationName} ein, mit der Rolle „${d.role}“.`],
        ['Melden Sie sich mit dieser E-Mail-Adresse an und öffnen Sie dann diesen Link, um anzunehmen oder abzulehnen:'],
        [link(d.link)],
        [`Die Einladung gilt bis ${d.expiresAt}. Wenn Sie den Absender nicht kennen, ignorieren Sie diese Nachricht.`],
      ],
    }),
  },
};

/** Every kind we can render, for tests and for callers that validate a stored kind. */
export const MAIL_KINDS = Object.keys(TEMPLATES) as MailKind[];
