// Conditional GET: If-None-Match against an asset's ETag (RFC 9110 §13.1.2), answered with 304 Not
// Modified (§15.4.5) when the caller's copy is current.

/**
 * The opaque tags of an If-None-Match value (quotes kept, `W/` dropped: the comparison is weak), `*`
 * for "any", or null when the value does not parse. An opaque tag may hold a comma, so the list is
 * read tag by tag rather than split.
 */
export function parseIfNoneMatch(value: string): '*' | string[] | null {
  const s = value.trim();
  if (s === '*') return '*';
  const tags: string[] = [];
  const isSpace = (c: string | undefined) => c === ' ' || c === '\t';
  let i = 0;
  while (i < s.length) {
    // Empty list elements are allowed (RFC 9110 §5.6.1.2).
    if (isSpace(s[i]) || s[i] === ',') {
      i += 1;
      continue;
    }
    if (s.startsWith('W/', i)) i += 2;
    if (s[i] !== '"') return null;
    const close = s.indexOf('"', i + 1);
    if (close < 0) return null;
    tags.push(s.slice(i, close + 1));
    i = close + 1;
    while (isSpace(s[i])) i += 1;
    if (i < s.length && s[i] !== ',') return null;
  }
  return tags;
}

/**
 * Whether If-None-Match matches `etag` (a strong tag, quotes included) by weak comparison: the
 * condition is false and the answer is 304. A malformed value never matches: the full answer is
 * always a correct one.
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const tags = parseIfNoneMatch(header);
  if (tags === null) return false;
  if (tags === '*') return true;
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  return tags.includes(opaque);
}
