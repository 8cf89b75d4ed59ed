import { describe, expect, test } from 'vitest';
import { apiBaseUrl } from '../src/base-url.js';

describe('apiBaseUrl', () => {
  const cases: [string, { given: string; want: string }][] = [
    ['appends the prefix', { given: 'http://127.0.0.1:8080', want: 'http://127.0.0.1:8080/api/v2' }],
    [
      'ignores a trailing slash',
      { given: 'https://api.example.com/', want: 'https://api.example.com/api/v2' },
    ],
    [
      'keeps a prefix already there',
      { given: 'https://api.example.com/api/v2', want: 'https://api.example.com/api/v2' },
    ],
    [
      'keeps it with a trailing slash',
      { given: 'https://api.example.com/api/v2/', want: 'https://api.example.com/api/v2' },
    ],
    [
      'keeps a mount path',
      { given: 'https://example.com/platform', want: 'https://example.com/platform/api/v2' },
    ],
    ['drops query and fragment', { given: 'https://example.com/?a=1#x', want: 'https://example.com/api/v2' }],
  ];
  test.each(cases)('%s', (_name, { given, want }) => {
    expect(apiBaseUrl(given)).toBe(want);
  });

  test.each(['', 'example.com', '/api/v2', 'file:///tmp'])('refuses %j', (given) => {
    expect(() => apiBaseUrl(given)).toThrow(TypeError);
  });
});
