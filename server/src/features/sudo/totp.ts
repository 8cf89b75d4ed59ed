// TOTP (RFC 6238: HMAC-SHA-1, 6 digits, 30-second steps) with otplib. Secrets are sealed at rest;
// a code is accepted once only (store.claimTotpStep).
import { generateSecret, generateURI, verify } from 'otplib';

export const TOTP_PERIOD_SECONDS = 30;
/** One step of clock drift either way. */
const TOLERANCE_SECONDS = TOTP_PERIOD_SECONDS;
export const PENDING_TOTP_SECONDS = 5 * 60;

export function newTotpSecret(): string {
  // 20 bytes (160 bits), RFC 4226 §4's recommended length, in base32.
  return generateSecret({ length: 20 });
}

export function totpUri(issuer: string, account: string, secret: string): string {
  return generateURI({ issuer, label: account, secret, period: TOTP_PERIOD_SECONDS, digits: 6, algorithm: 'sha1' });
}

/** The time step `code` belongs to at `now` (within one step of drift), or null when it matches none. */
export async function matchTotp(secret: string, code: string, now: Date): Promise<number | null> {
  const result = await verify({
    secret,
    token: code,
    epoch: Math.floor(now.getTime() / 1000),
    epochTolerance: TOLERANCE_SECONDS,
  });
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}
