// What the spec's schemas cannot say about staff input: text is trimmed and free of control
// characters, hostnames compare lowercase without the root dot, and each captcha provider has the
// verify URL of its siteverify endpoint. Refusals are 400 invalid-field-value naming the field.
import { invalidFieldValue } from '../../http/errors.js';

const TEXT_MAX = 200;
const LONG_TEXT_MAX = 4000;

const refuse = (pointer: string, detail: string, message: string) =>
  invalidFieldValue(detail, [{ location: 'body', pointer, message }]);

/** A title or a name: 1 to 200 characters after trimming, no control characters. */
export function shortText(raw: string, pointer: string): string {
  const text = raw.trim();
  let reason: string | null = null;
  if (text.length === 0) reason = 'empty';
  else if ([...text].length > TEXT_MAX) reason = 'too long';
  // eslint-disable-next-line no-control-regex
  else if (/[\u0000-\u001f\u007f-\u009f]/.test(text)) reason = 'a control character';
  if (reason === null) return text;
  throw refuse(
    pointer,
    `This must be 1 to ${TEXT_MAX} characters after trimming, without control characters.`,
    reason,
  );
}

/** A message: trimmed, blank reads as none; line breaks and tabs are fine, other control characters not. */
export function longText(raw: string | null | undefined, pointer: string): string | null {
  const text = raw?.trim() ?? '';
  if (text.length === 0) return null;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/.test(text)) {
    throw refuse(
      pointer,
      'Only line breaks and tabs may appear among control characters.',
      'a control character',
    );
  }
  if ([...text].length > LONG_TEXT_MAX) {
    throw refuse(pointer, `At most ${LONG_TEXT_MAX} characters.`, 'too long');
  }
  return text;
}

/** The spec's pattern already holds (ASCII labels); hostnames are stored lowercase without the root dot. */
export const hostnameOf = (raw: string): string => raw.toLowerCase().replace(/\.$/, '');

export const brandColorOf = (raw: string): string => raw.toLowerCase();

/** The siteverify endpoint of each provider the front ends know; `custom` names its own. */
export const DEFAULT_VERIFY_URLS: Readonly<Record<string, string | null>> = {
  hcaptcha: 'https://api.hcaptcha.com/siteverify',
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  recaptcha: 'https://www.google.com/recaptcha/api/siteverify',
  custom: null,
};

/** Timestamps a staff member gives must be real instants a PostgreSQL timestamptz holds. */
export function instantOf(raw: string, pointer: string): Date {
  const at = new Date(raw);
  const year = at.getUTCFullYear();
  if (Number.isNaN(at.getTime()) || year < 1970 || year > 9999) {
    throw refuse(
      pointer,
      'Give a time between 1970 and 9999, as RFC 3339 (2030-01-31T12:00:00Z).',
      'out of range',
    );
  }
  return at;
}
