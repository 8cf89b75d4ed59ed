// Opaque credentials and their stored digests (DECISIONS.md §3). The database only ever holds a
// digest: a stolen table or backup yields nothing that can be presented back to the API.
//
// - Refresh tokens, emailed tokens: 256 random bits, so an unkeyed SHA-256 is enough; there is
//   nothing to guess, and a plain digest lets any process look a token up by its digest.
// - Personal API and application tokens: HMAC-SHA-256 with a server pepper (`keyedDigest`), so that
//   a leaked token table alone cannot even be used to confirm a candidate token offline.
import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { base62Encode, base62Length } from './base62.js';

export const REFRESH_TOKEN_PREFIX = 'svc_rt_';
export const PERSONAL_API_TOKEN_PREFIX = 'svc_pat_';
export const APPLICATION_TOKEN_PREFIX = 'svc_app_';

/** Every random secret is 32 bytes (256 bits), per DECISIONS.md §3. */
export const SECRET_BYTES = 32;
/** The base62 text length of a secret: 43. */
export const SECRET_LENGTH = base62Length(SECRET_BYTES);

// Far longer than any credential we mint; input beyond it is refused before any work is done.
const MAX_CREDENTIAL_LENGTH = 256;
const SECRET_PATTERN = `[0-9A-Za-z]{${SECRET_LENGTH}}`;
// Lowercase canonical form only: we mint ids with randomUUID(), so any other spelling is not ours.
const UUID_PATTERN = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const REFRESH_TOKEN_RE = new RegExp(`^${REFRESH_TOKEN_PREFIX}${SECRET_PATTERN}$`);
const PERSONAL_API_TOKEN_RE = new RegExp(
  `^${PERSONAL_API_TOKEN_PREFIX}(${UUID_PATTERN})_(${SECRET_PATTERN})$`,
);
const APPLICATION_TOKEN_RE = new RegExp(`^${APPLICATION_TOKEN_PREFIX}(${UUID_PATTERN})_(${SECRET_PATTERN})$`);

/** base62 of 32 random bytes: the secret part of refresh, personal API and application tokens. */
export function newSecret(): string {
  return base62Encode(randomBytes(SECRET_BYTES));
}

// --- Refresh tokens -------------------------------------------------------------------------------

export function newRefreshToken(): string {
  return REFRESH_TOKEN_PREFIX + newSecret();
}

/** True when `raw` has the shape of a refresh token; lets a caller refuse garbage without a lookup. */
export function isRefreshToken(raw: string): boolean {
  return raw.length <= MAX_CREDENTIAL_LENGTH && REFRESH_TOKEN_RE.test(raw);
}

/** SHA-256 of a high-entropy token (refresh or emailed): the only form stored. */
export function digestToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/**
 * The successor of a refresh token, derived rather than random. Refresh tokens rotate on every use and
 * a spent one revokes its family (RFC 9700 §4.14.2). A client whose refresh response was lost retries
 * with the same spent token; within a short grace window (10 s) the caller may answer that retry with
 * the same successor it already issued. Deriving it with a keyed HMAC makes that possible while the
 * database still stores only digests: the caller recomputes the successor from the presented token and
 * checks that its digest is the one recorded at rotation.
 *
 * The caller owns the grace rule: only within the window, only when the recorded successor digest
 * matches, and never after the successor itself was used. Outside it, reuse detection applies.
 * `pepper` is a server secret (server-secrets.ts); without it the successor is not computable.
 */
export function successorRefreshToken(presented: string, pepper: Buffer): string {
  assertPepper(pepper);
  const mac = createHmac('sha256', pepper).update(`refresh-successor:${presented}`, 'utf8').digest();
  return REFRESH_TOKEN_PREFIX + base62Encode(mac);
}

// --- Emailed one-time codes and links -------------------------------------------------------------

/** Six decimal digits, uniform: crypto.randomInt rejects samples instead of using modulo. */
export function newLoginCode(): string {
  return randomInt(0, 1_000_000).toString().padStart(6, '0');
}

/**
 * The stored form of a login code, bound to its challenge so that equal codes of two challenges have
 * different digests and a digest cannot be moved to another challenge.
 *
 * A 6-digit code has 20 bits: anyone holding this digest can recover the code by trying all 10^6, and
 * a pepper kept in the same database would not change that. What protects the code is its short life
 * and the few wrong attempts a challenge allows (seed document 1, "Limits"), not this digest.
 */
export function digestCode(challengeId: string, code: string): Buffer {
  return createHash('sha256').update(`login-code:${challengeId}:${code}`, 'utf8').digest();
}

/** A URL-safe single-use token for emailed links (verify address, reset password); 32 random bytes. */
export function newEmailToken(): string {
  return randomBytes(SECRET_BYTES).toString('base64url');
}

/** The stored form of an emailed link token. */
export function digestEmailToken(token: string): Buffer {
  return digestToken(token);
}

// --- Personal API and application tokens (DECISIONS.md §3) ----------------------------------------

/** HMAC-SHA-256 of a secret under a server pepper: the stored form of API token secrets. */
export function keyedDigest(pepper: Buffer, secret: string): Buffer {
  assertPepper(pepper);
  return createHmac('sha256', pepper).update(secret, 'utf8').digest();
}

export function formatPersonalApiToken(tokenId: string, secret: string): string {
  return `${PERSONAL_API_TOKEN_PREFIX}${tokenId}_${secret}`;
}

export function formatApplicationToken(applicationId: string, secret: string): string {
  return `${APPLICATION_TOKEN_PREFIX}${applicationId}_${secret}`;
}

/** `svc_pat_{token_id}_{secret}` → its parts, or null when it is not exactly that shape. */
export function parsePersonalApiToken(raw: string): { tokenId: string; secret: string } | null {
  const m = raw.length <= MAX_CREDENTIAL_LENGTH ? PERSONAL_API_TOKEN_RE.exec(raw) : null;
  return m ? { tokenId: m[1]!, secret: m[2]! } : null;
}

/** `svc_app_{application_id}_{secret}` → its parts, or null when it is not exactly that shape. */
export function parseApplicationToken(raw: string): { applicationId: string; secret: string } | null {
  const m = raw.length <= MAX_CREDENTIAL_LENGTH ? APPLICATION_TOKEN_RE.exec(raw) : null;
  return m ? { applicationId: m[1]!, secret: m[2]! } : null;
}

// --- Comparison -----------------------------------------------------------------------------------

/**
 * Constant-time equality of two digests. Lengths are not secret (every digest here is 32 bytes), so
 * a length mismatch answers false at once instead of throwing as crypto.timingSafeEqual does.
 */
export function safeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

// A per-process key: hashing both sides first makes the comparison independent of where the inputs
// differ and of their lengths.
const compareKey = randomBytes(32);

/** Constant-time equality of two strings of any length (codes, secrets that are not digests). */
export function safeEqualText(a: string, b: string): boolean {
  const ha = createHmac('sha256', compareKey).update(a, 'utf8').digest();
  const hb = createHmac('sha256', compareKey).update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}

function assertPepper(pepper: Buffer): void {
  // An empty or short key is a wiring bug that would make the digests forgeable: fail loudly.
  if (pepper.length < 16) throw new RangeError('pepper must be at least 16 bytes');
}
