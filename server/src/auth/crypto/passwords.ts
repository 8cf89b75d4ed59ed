// Password hashing and the password policy.
//
// Hashing: argon2id at the OWASP Password Storage Cheat Sheet's first configuration (m=19 MiB, t=2,
// p=1). Argon2 (RFC 9106) pre-hashes its input, so unlike bcrypt there is no 72-byte cut-off and a
// long passphrase counts in full; we never truncate.
//
// Normalisation: every password is NFC-normalised before it is checked, hashed or verified. The same
// typed password can reach us as different code points: "é" precomposed (U+00E9) from one keyboard
// and "e" + U+0301 from another (macOS input methods, some mobile keyboards, copy-paste). Without
// normalisation a user who set a password on one device could not sign in from another. NFC is the
// form RFC 8265 §4.2 (PRECIS OpaqueString, the profile for passwords) prescribes; the compatibility
// forms (NFKC) would fold distinct characters (ligatures, full-width) together and lose entropy.
// Changing the normalisation later would lock out every password it changes: do not.
import argon2 from 'argon2';
import { dictionary } from '@zxcvbn-ts/language-common';

export const PASSWORD_HASH_PARAMS = {
  type: argon2.argon2id,
  memoryCost: 19_456, // KiB
  timeCost: 2,
  parallelism: 1,
} as const;

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 1024;

// A hash of a random, discarded password at PASSWORD_HASH_PARAMS. Verifying against it costs the
// same as verifying a real hash, so an unknown address and a wrong password take the same time
// (DECISIONS.md §4: "in the same time"). A test checks it still matches the current parameters.
export const DUMMY_PASSWORD_HASH =
  '$argon2id$v=19$m=19456,p=1,t=2$eJg6n2FzICR+n9IRmJ7sXQ$dOgoz6+46ceSrwQT5cEhprER8Tf9phT7sIrycVGAemM';

export function normalizePassword(password: string): string {
  return password.normalize('NFC');
}

export async function hashPassword(password: string): Promise<string> {
  return argon2.hash(normalizePassword(password), PASSWORD_HASH_PARAMS);
}

/**
 * Checks `password` against a stored hash. Pass null for an unknown account or one without a
 * password: the work done is the same and the answer is `ok: false`, so callers need no branch that
 * answers faster.
 *
 * `needsRehash` is true only on success (a new hash needs the correct password) when the stored hash
 * was made with other parameters or another argon2 variant: the caller then stores
 * `hashPassword(password)`, upgrading hashes as users sign in.
 */
export async function verifyPassword(
  hash: string | null,
  password: string,
): Promise<{ ok: boolean; needsRehash: boolean }> {
  const ok = await verifyOrSpend(hash ?? DUMMY_PASSWORD_HASH, normalizePassword(password));
  if (hash === null || !ok) return { ok: false, needsRehash: false };
  return { ok: true, needsRehash: hashNeedsRehash(hash) };
}

/** True when `hash` is not argon2id at PASSWORD_HASH_PARAMS. */
export function hashNeedsRehash(hash: string): boolean {
  if (!hash.startsWith('$argon2id$')) return true;
  try {
    return argon2.needsRehash(hash, PASSWORD_HASH_PARAMS);
  } catch {
    return true;
  }
}

async function verifyOrSpend(hash: string, password: string): Promise<boolean> {
  try {
    return await argon2.verify(hash, password);
  } catch {
    // A stored value that is not a PHC string (corrupt row, foreign hash format): refuse, but only
    // after the same work as a real check, so the refusal is not faster than a wrong password.
    await argon2.verify(DUMMY_PASSWORD_HASH, password).catch(() => false);
    return false;
  }
}

// --- Policy (NIST SP 800-63B-4 §3.1.1.2: length, a blocklist, context words; no composition rules) ---

export type PasswordPolicyReason = 'too_short' | 'too_long' | 'common' | 'contains_email';

export type PasswordPolicyResult =
  { ok: true } | { ok: false; reason: PasswordPolicyReason; message: string };

let commonPasswords: Set<string> | null = null;

// Built on first use rather than at import: 49k entries that most importers of this module (sign-in)
// never need.
function isCommon(lowercased: string): boolean {
  commonPasswords ??= new Set(dictionary['passwords-common'].map((p) => p.toLowerCase()));
  return commonPasswords.has(lowercased);
}

/**
 * Whether `password` may be set. Lengths count code points after NFC, so "é" is one character
 * however it was typed and an emoji is not two. `context` names the account: a password equal to its
 * email address, the address's local part or the account's name is refused (reason `contains_email`,
 * which covers all three: they are what an attacker tries first).
 */
export function checkPasswordPolicy(
  password: string,
  context: { email?: string; name?: string } = {},
): PasswordPolicyResult {
  const normalized = normalizePassword(password);
  const length = [...normalized].length;
  if (length < PASSWORD_MIN_LENGTH) {
    return refuse('too_short', `Password must be at least ${PASSWORD_MIN_LENGTH} characters long.`);
  }
  if (length > PASSWORD_MAX_LENGTH) {
    return refuse('too_long', `Password must be at most ${PASSWORD_MAX_LENGTH} characters long.`);
  }
  const lowered = normalized.toLowerCase();
  if (personalWords(context).includes(lowered)) {
    return refuse('contains_email', 'Password must not be your email address or your name.');
  }
  if (isCommon(lowered)) {
    return refuse('common', 'This password is too common; choose one that is harder to guess.');
  }
  return { ok: true };
}

function personalWords({ email, name }: { email?: string; name?: string }): string[] {
  const words: string[] = [];
  if (email) {
    const address = email.trim().normalize('NFC').toLowerCase();
    const at = address.lastIndexOf('@');
    words.push(address);
    if (at > 0) words.push(address.slice(0, at));
  }
  if (name) {
    const trimmed = name.trim().normalize('NFC').toLowerCase();
    if (trimmed) words.push(trimmed);
  }
  return words;
}

function refuse(reason: PasswordPolicyReason, message: string): PasswordPolicyResult {
  return { ok: false, reason, message };
}
