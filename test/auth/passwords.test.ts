import argon2 from 'argon2';
import { describe, expect, it } from 'vitest';
import {
  DUMMY_PASSWORD_HASH,
  hashNeedsRehash,
  hashPassword,
  verifyPassword,
} from '../../server/src/auth/crypto/passwords.js';

describe('hashPassword', () => {
  it('makes argon2id at the OWASP parameters, salted afresh each time', async () => {
    const a = await hashPassword('vq7-lake-ferns');
    const b = await hashPassword('vq7-lake-ferns');
    expect(a).toMatch(/^\$argon2id\$v=19\$/);
    expect(a).toContain('m=19456');
    expect(a).toContain('t=2');
    expect(a).toContain('p=1');
    expect(a).not.toBe(b);
    expect(hashNeedsRehash(a)).toBe(false);
  });
});

describe('verifyPassword', () => {
  it('accepts the password and refuses another', async () => {
    const hash = await hashPassword('vq7-lake-ferns');
    expect(await verifyPassword(hash, 'vq7-lake-ferns')).toEqual({ ok: true, needsRehash: false });
    expect(await verifyPassword(hash, 'vq7-lake-fern')).toEqual({ ok: false, needsRehash: false });
    expect(await verifyPassword(hash, 'VQ7-LAKE-FERNS')).toEqual({ ok: false, needsRehash: false });
  });

  it('accepts the password typed in another Unicode normal form', async () => {
    const precomposed = 'caf\u00e9-au-lait';
    const decomposed = 'cafe\u0301-au-lait';
    expect(precomposed).not.toBe(decomposed);
    expect((await verifyPassword(await hashPassword(precomposed), decomposed)).ok).toBe(true);
    expect((await verifyPassword(await hashPassword(decomposed), precomposed)).ok).toBe(true);
  });

  it('never truncates: a change in the 1000th character is a different password', async () => {
    const long = 'a'.repeat(999) + 'b';
    const hash = await hashPassword(long);
    expect((await verifyPassword(hash, long)).ok).toBe(true);
    expect((await verifyPassword(hash, 'a'.repeat(999) + 'c')).ok).toBe(false);
  });

  it('answers ok false for no hash (unknown account), whatever the password', async () => {
    expect(await verifyPassword(null, 'vq7-lake-ferns')).toEqual({ ok: false, needsRehash: false });
    expect(await verifyPassword(null, '')).toEqual({ ok: false, needsRehash: false });
  });

  it('answers ok false for a stored value that is not a hash', async () => {
    expect(await verifyPassword('not-a-hash', 'vq7-lake-ferns')).toEqual({ ok: false, needsRehash: false });
    expect(await verifyPassword('', 'vq7-lake-ferns')).toEqual({ ok: false, needsRehash: false });
  });

  it.each([
    ['less memory', { memoryCost: 8192, timeCost: 2, parallelism: 1, type: argon2.argon2id }],
    ['more passes', { memoryCost: 19_456, timeCost: 3, parallelism: 1, type: argon2.argon2id }],
    ['more lanes', { memoryCost: 19_456, timeCost: 2, parallelism: 2, type: argon2.argon2id }],
    ['argon2i at the same cost', { memoryCost: 19_456, timeCost: 2, parallelism: 1, type: argon2.argon2i }],
  ] as const)('reports needsRehash for a hash made with %s', async (_name, params) => {
    const old = await argon2.hash('vq7-lake-ferns', params);
    expect(await verifyPassword(old, 'vq7-lake-ferns')).toEqual({ ok: true, needsRehash: true });
    // Only a correct password can be rehashed, so a wrong one reports nothing to do.
    expect(await verifyPassword(old, 'wrong-password')).toEqual({ ok: false, needsRehash: false });
  });

  it('keeps the dummy hash at the current parameters, so the unknown-account path costs the same', () => {
    expect(hashNeedsRehash(DUMMY_PASSWORD_HASH)).toBe(false);
  });
});
