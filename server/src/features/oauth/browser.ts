// Binding a flow to the browser that started it (RFC 9700 §4.7: without it, an attacker's flow finished
// in a victim's browser links the victim's identity to the attacker's account, or signs the victim in as
// the attacker). The start answer sets a random cookie, named after the flow's state so flows in several
// tabs keep theirs; the flow keeps its digest; the callback requires it.
//
// Exempt: a sign-in flow whose redirect_to is a loopback address. That is svcctl's own listener: its
// start request never passes through the browser, and a key sent to a victim's loopback reaches nobody
// but the victim's own svcctl. Link flows are never exempt.
import { newSecret, digestToken, safeEqual } from '../../auth/crypto/tokens.js';

const COOKIE_PATH = '/api/v2/auth/oauth';

export const cookieName = (stateDigest: Buffer) => `svc_oauth_${stateDigest.subarray(0, 12).toString('hex')}`;

export function needsBrowser(purpose: 'sign_in' | 'link', redirectTo: string): boolean {
  if (purpose === 'link') return true;
  const host = new URL(redirectTo).hostname;
  return !(host === '127.0.0.1' || host === '[::1]' || host === 'localhost');
}

/** A new binding: the cookie to set (10 minutes, the flow's life) and the digest to keep. */
export function newBinding(stateDigest: Buffer, secure: boolean, maxAgeSeconds: number) {
  const value = newSecret();
  const cookie = [
    `${cookieName(stateDigest)}=${value}`,
    `Path=${COOKIE_PATH}`,
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(secure ? ['Secure'] : []),
  ].join('; ');
  return { cookie, digest: digestToken(value) };
}

/** Whether the request carries the flow's cookie. */
export function carriesBinding(cookieHeader: string | undefined, stateDigest: Buffer, digest: Buffer): boolean {
  const name = cookieName(stateDigest);
  for (const part of (cookieHeader ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    if (safeEqual(digestToken(part.slice(eq + 1).trim()), digest)) return true;
  }
  return false;
}
