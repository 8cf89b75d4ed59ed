// Quake 3's colour codes, stripped as ioquake3's Q_CleanStr does: `^` followed by any character but
// another `^` (or the end) is a code and both go; so `^^1a` reads `^a` and a trailing `^` stays. Bytes
// outside printable ASCII go too.
export function stripColours(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '^' && i + 1 < text.length && text[i + 1] !== '^') {
      i++;
      continue;
    }
    const code = c.charCodeAt(0);
    if (code >= 0x20 && code <= 0x7e) out += c;
  }
  return out;
}
