import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { base62Decode, base62Encode, base62Length } from '../../server/src/auth/crypto/base62.js';

describe('base62', () => {
  it.each([
    ['no bytes', { given: [], want: '' }],
    ['one zero byte', { given: [0], want: '00' }],
    ['one byte 61', { given: [61], want: '0z' }],
    ['one byte 62', { given: [62], want: '10' }],
    ['0xffff', { given: [0xff, 0xff], want: 'H31' }],
    ['leading zeros keep the width', { given: [0, 0, 1], want: '00001' }],
  ] as const)('%s', (_name, { given, want }) => {
    expect(base62Encode(Uint8Array.from(given))).toBe(want);
  });

  it.each([
    [1, 2],
    [16, 22],
    [32, 43],
  ])('encodes %i bytes in %i characters', (bytes, chars) => {
    expect(base62Length(bytes)).toBe(chars);
    expect(base62Encode(new Uint8Array(bytes).fill(0xff))).toHaveLength(chars);
    expect(base62Encode(new Uint8Array(bytes))).toBe('0'.repeat(chars));
  });

  it('round-trips any 32 bytes at a fixed width of alphanumerics', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
        const text = base62Encode(bytes);
        expect(text).toMatch(/^[0-9A-Za-z]{43}$/);
        expect(base62Decode(text, 32)).toEqual(Buffer.from(bytes));
      }),
    );
  });

  it.each([
    ['wrong length', 'abc'],
    ['not base62', `${'0'.repeat(42)}_`],
    ['above 2^256', 'z'.repeat(43)],
  ])('decode refuses %s', (_name, text) => {
    expect(base62Decode(text, 32)).toBeNull();
  });
});
