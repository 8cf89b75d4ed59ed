// Which failures end an operation at once, table-driven: [name, { given, want }].
import { describe, expect, it } from 'vitest';
import { SnapshotIntegrityError } from '../substrate/driver.js';
import { permanentFailure } from './permanent.js';

const errno = (code: string, syscall?: string) =>
  Object.assign(new Error(`${code} somewhere`), { code, ...(syscall ? { syscall } : {}) });

const CASES: [string, { given: unknown; want: RegExp | null }][] = [
  ['ENOSPC from a write', { given: errno('ENOSPC'), want: /disk .* is full/ }],
  ['EDQUOT from a write', { given: errno('EDQUOT'), want: /quota exceeded/ }],
  [
    'tee saying so on stderr',
    { given: new Error('tee failed (exit 1): tee: /x.tmp: No space left on device'), want: /is full/ },
  ],
  ['a missing program', { given: errno('ENOENT', 'spawn zstd'), want: /\(zstd\) is not installed/ }],
  ['a corrupt archive', { given: new SnapshotIntegrityError('The backup archive is damaged.'), want: /damaged/ }],
  ['a missing file is not a missing program', { given: errno('ENOENT', 'open'), want: null }],
  ['a refused connection passes by itself', { given: errno('ECONNREFUSED'), want: null }],
  ['a program killed by a signal', { given: new Error('tar failed (exit by a signal): '), want: null }],
];

describe('permanentFailure', () => {
  it.each(CASES)('%s', (_name, { given, want }) => {
    const got = permanentFailure(given);
    if (want === null) expect(got).toBeNull();
    else expect(got).toMatch(want);
  });
});
