// If-None-Match parsing and weak comparison (RFC 9110 §13.1.2), table-driven.
import { describe, expect, it } from 'vitest';
import { ifNoneMatchHits, parseIfNoneMatch } from '../../server/src/features/assets/conditional.js';

const ETAG = '"abc"';

describe('parseIfNoneMatch', () => {
  it.each<[string, { given: string; want: ReturnType<typeof parseIfNoneMatch> }]>([
    ['a star', { given: '*', want: '*' }],
    ['a star with spaces', { given: '  * ', want: '*' }],
    ['one strong tag', { given: '"abc"', want: ['"abc"'] }],
    ['one weak tag', { given: 'W/"abc"', want: ['"abc"'] }],
    [
      'a list with spaces and empty elements',
      { given: ' "a" ,, W/"b",\t"c" ,', want: ['"a"', '"b"', '"c"'] },
    ],
    ['a comma inside a tag', { given: '"a,b", "c"', want: ['"a,b"', '"c"'] }],
    ['the empty tag', { given: '""', want: ['""'] }],
    ['an unquoted tag', { given: 'abc', want: null }],
    ['an unterminated tag', { given: '"abc', want: null }],
    ['junk after a tag', { given: '"abc" x', want: null }],
    ['a lower-case weak prefix', { given: 'w/"abc"', want: null }],
    ['a star inside a list', { given: '"a", *', want: null }],
  ])('%s', (_name, { given, want }) => {
    expect(parseIfNoneMatch(given)).toEqual(want);
  });
});

describe('ifNoneMatchHits', () => {
  it.each<[string, { given: string | undefined; want: boolean }]>([
    ['no header', { given: undefined, want: false }],
    ['the same tag', { given: '"abc"', want: true }],
    ['the same tag, weak', { given: 'W/"abc"', want: true }],
    ['in a list', { given: '"x", "abc"', want: true }],
    ['star', { given: '*', want: true }],
    ['another tag', { given: '"abd"', want: false }],
    ['malformed', { given: 'abc', want: false }],
    ['a tag that contains it', { given: '"xabc"', want: false }],
  ])('%s', (_name, { given, want }) => {
    expect(ifNoneMatchHits(given, ETAG)).toBe(want);
  });
});
