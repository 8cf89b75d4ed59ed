// Base62 (0-9, A-Z, a-z) for the secret part of our opaque credentials: no characters that need
// escaping in a URL, a header or a shell, no `_` (our separator, DECISIONS.md §3), and a double-click
// in a terminal selects the whole token.
//
// The encoding is a fixed-width big-endian number, left-padded with '0', so that every secret of a
// given byte length has the same text length and a parser can check the shape exactly.

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE = 62n;

/** The number of base62 characters that `base62Encode` produces for `byteLength` bytes (32 → 43). */
export function base62Length(byteLength: number): number {
  // Exact integer arithmetic: the smallest L with 62^L ≥ 256^n (floating log2 could round wrong).
  const limit = 1n << BigInt(byteLength * 8);
  let length = 0;
  for (let p = 1n; p < limit; p *= BASE) length++;
  return length;
}

export function base62Encode(bytes: Uint8Array): string {
  let n = bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % BASE)] + out;
    n /= BASE;
  }
  return out.padStart(base62Length(bytes.length), '0');
}

/** The inverse of `base62Encode` for `byteLength` bytes; null when `text` is not such an encoding. */
export function base62Decode(text: string, byteLength: number): Buffer | null {
  if (text.length !== base62Length(byteLength) || !/^[0-9A-Za-z]*$/.test(text)) return null;
  let n = 0n;
  for (const ch of text) n = n * BASE + BigInt(ALPHABET.indexOf(ch));
  if (n >> BigInt(byteLength * 8) !== 0n) return null;
  return Buffer.from(n.toString(16).padStart(byteLength * 2, '0'), 'hex');
}
