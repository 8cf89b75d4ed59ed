import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { base62Encode } from '../../server/src/auth/crypto/base62.js';
import {
  digestCode,
  digestEmailToken,
  digestToken,
  formatApplicationToken,
  formatPersonalApiToken,
  isRefreshToken,
  keyedDigest,
  newEmailToken,
  newLoginCode,
  newRefreshToken,
  newSecret,
  parseApplicationToken,
  parsePersonalApiToken,
  safeEqual,
  safeEqualText,
  successorRefreshToken,
} from '../../server/src/auth/crypto/tokens.js';

const pepper = Buffer.alloc(32, 7);
const REFRESH_SHAPE = /^svc_rt_[0-9A-Za-z]{43}$/;

describe('refresh tokens', () => {
  it('are svc_rt_ and 43 base62 characters, fresh every time', () => {
    const tokens = Array.from({ length: 50 }, newRefreshToken);
    for (const t of tokens) {
      expect(t).toMatch(REFRESH_SHAPE);
      expect(isRefreshToken(t)).toBe(true);
    }
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it.each([
    ['empty', ''],
    ['no prefix', newSecret()],
    ['a personal API token', formatPersonalApiToken(randomUUID(), newSecret())],
    ['one character short', newRefreshToken().slice(0, -1)],
    ['trailing newline', `${newRefreshToken()}\n`],
  ])('isRefreshToken refuses %s', (_name, raw) => {
    expect(isRefreshToken(raw)).toBe(false);
  });

  it('are stored as their SHA-256 digest', () => {
    const t = newRefreshToken();
    expect(digestToken(t)).toEqual(createHash('sha256').update(t).digest());
    expect(digestToken('abc').toString('hex')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('have a successor that is the same for the same spent token and pepper', () => {
    const spent = newRefreshToken();
    const first = successorRefreshToken(spent, pepper);
    expect(first).toMatch(REFRESH_SHAPE);
    expect(successorRefreshToken(spent, pepper)).toBe(first);
    expect(first).not.toBe(spent);
    expect(successorRefreshToken(first, pepper)).not.toBe(first);
  });

  it('have a successor that depends on both the token and the pepper', () => {
    const spent = newRefreshToken();
    expect(successorRefreshToken(spent, Buffer.alloc(32, 8))).not.toBe(successorRefreshToken(spent, pepper));
    expect(successorRefreshToken(newRefreshToken(), pepper)).not.toBe(successorRefreshToken(spent, pepper));
    const mac = createHmac('sha256', pepper).update(`refresh-successor:${spent}`).digest();
    // The derivation is part of the contract: every API process must compute the same successor.
    expect(successorRefreshToken(spent, pepper)).toBe(`svc_rt_${base62Encode(mac)}`);
  });

  it('refuse to derive a successor with a missing pepper', () => {
    expect(() => successorRefreshToken(newRefreshToken(), Buffer.alloc(0))).toThrow(RangeError);
  });
});

describe('login codes', () => {
  it('are six digits, leading zeros kept', () => {
    const codes = Array.from({ length: 2000 }, newLoginCode);
    for (const c of codes) expect(c).toMatch(/^\d{6}$/);
    // One in ten codes starts with 0; 2000 draws without one would mean the padding is lost.
    expect(codes.some((c) => c.startsWith('0'))).toBe(true);
  });

  it('are stored as a digest bound to the challenge', () => {
    const challenge = randomUUID();
    expect(digestCode(challenge, '123456')).toEqual(digestCode(challenge, '123456'));
    expect(digestCode(challenge, '123456')).not.toEqual(digestCode(randomUUID(), '123456'));
    expect(digestCode(challenge, '123456')).not.toEqual(digestCode(challenge, '123457'));
    expect(digestCode(challenge, '123456')).toHaveLength(32);
  });
});

describe('emailed link tokens', () => {
  it('are 32 random bytes in base64url, stored as SHA-256', () => {
    const t = newEmailToken();
    expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(t, 'base64url')).toHaveLength(32);
    expect(newEmailToken()).not.toBe(t);
    expect(digestEmailToken(t)).toEqual(createHash('sha256').update(t).digest());
  });
});

describe('API tokens', () => {
  const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
  const secret = newSecret();

  it('store an HMAC of the secret under the pepper', () => {
    expect(keyedDigest(pepper, secret)).toEqual(createHmac('sha256', pepper).update(secret).digest());
    expect(keyedDigest(Buffer.alloc(32, 9), secret)).not.toEqual(keyedDigest(pepper, secret));
    expect(() => keyedDigest(Buffer.alloc(8), secret)).toThrow(RangeError);
  });

  it('parse what they format', () => {
    expect(parsePersonalApiToken(formatPersonalApiToken(id, secret))).toEqual({ tokenId: id, secret });
    expect(parseApplicationToken(formatApplicationToken(id, secret))).toEqual({ applicationId: id, secret });
  });

  it.each([
    ['empty', ''],
    ['an application token', `svc_app_${id}_${secret}`],
    ['a refresh token', newRefreshToken()],
    ['uppercase id', `svc_pat_${id.toUpperCase()}_${secret}`],
    ['id without dashes', `svc_pat_${id.replace(/-/g, '')}_${secret}`],
    ['short secret', `svc_pat_${id}_${secret.slice(1)}`],
    ['long secret', `svc_pat_${id}_${secret}0`],
    ['secret with a dash', `svc_pat_${id}_${secret.slice(1)}-`],
    ['missing separator', `svc_pat_${id}${secret}`],
    ['leading space', ` svc_pat_${id}_${secret}`],
    ['trailing newline', `svc_pat_${id}_${secret}\n`],
    ['Bearer prefix', `Bearer svc_pat_${id}_${secret}`],
    ['very long', `svc_pat_${id}_${'a'.repeat(100_000)}`],
  ])('parsePersonalApiToken refuses %s', (_name, raw) => {
    expect(parsePersonalApiToken(raw)).toBeNull();
  });

  it.each([
    ['a personal token', `svc_pat_${id}_${secret}`],
    ['short secret', `svc_app_${id}_${secret.slice(1)}`],
    ['no id', `svc_app__${secret}`],
  ])('parseApplicationToken refuses %s', (_name, raw) => {
    expect(parseApplicationToken(raw)).toBeNull();
  });
});

describe('constant-time comparison', () => {
  it.each([
    ['equal digests', { a: Buffer.alloc(32, 1), b: Buffer.alloc(32, 1), want: true }],
    [
      'one bit apart',
      { a: Buffer.alloc(32, 1), b: Buffer.concat([Buffer.alloc(31, 1), Buffer.from([3])]), want: false },
    ],
    ['different lengths', { a: Buffer.alloc(32, 1), b: Buffer.alloc(31, 1), want: false }],
  ])('safeEqual: %s', (_name, { a, b, want }) => {
    expect(safeEqual(a, b)).toBe(want);
  });

  it.each([
    ['equal', { a: '123456', b: '123456', want: true }],
    ['different', { a: '123456', b: '123457', want: false }],
    ['prefix', { a: '12345', b: '123456', want: false }],
    ['empty and empty', { a: '', b: '', want: true }],
  ])('safeEqualText: %s', (_name, { a, b, want }) => {
    expect(safeEqualText(a, b)).toBe(want);
  });

  it('safeEqual accepts random digests of equal length without throwing', () => {
    expect(safeEqual(randomBytes(32), randomBytes(32))).toBe(false);
  });
});
