// The token of an emailed link (`…/auth/verify-email?token=T`, `…/auth/reset-password?token=T`), given
// the whole link or the token alone. A link copied from the raw .eml of DATA_DIR/outbox is
// quoted-printable (`=3D` for `=`, a line ending in `=` where it was wrapped): decoded first, since a
// token (base64url) never holds an `=` of its own.
import { UsageError } from './errors.js';

export function tokenFromLink(input: string): string {
  let value = input.trim();
  if (/=3D|=\r?\n/i.test(value)) {
    value = value
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  }
  if (!/^https?:\/\//i.test(value)) return value;
  let token: string | null = null;
  try {
    token = new URL(value).searchParams.get('token');
  } catch {
    token = null;
  }
  if (!token)
    throw new UsageError('the link has no token=...; give the whole link from the mail, or the token in it');
  return token;
}
