import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { parseApiRequest } from '../src/api-request.js';

describe('parseApiRequest', () => {
  it.each([
    [
      'a plain route',
      {
        given: ['get', '/public/incidents', [], []],
        want: { method: 'GET', path: '/public/incidents', query: {}, headers: {} },
      },
    ],
    [
      'a copied /api/v2 prefix is dropped',
      {
        given: ['GET', '/api/v2/public/incidents', [], []],
        want: { method: 'GET', path: '/public/incidents', query: {}, headers: {} },
      },
    ],
    [
      'a query string and --query merge; repeated keys become lists',
      {
        given: ['GET', '/x?a=1&b=2', ['a=3', 'c=x=y'], []],
        want: { method: 'GET', path: '/x', query: { a: ['1', '3'], b: '2', c: 'x=y' }, headers: {} },
      },
    ],
    [
      'headers as name=value or name: value',
      {
        given: ['POST', '/x', [], ['X-A=1', 'X-B: two']],
        want: { method: 'POST', path: '/x', query: {}, headers: { 'X-A': '1', 'X-B': 'two' } },
      },
    ],
  ] as const)('%s', (_name, { given, want }) => {
    const [method, path, query, headers] = given;
    expect(parseApiRequest(method, path, query, headers)).toEqual(want);
  });

  it.each([
    ['FETCH', '/x', [], [], 'unknown method "FETCH"'],
    ['GET', 'x', [], [], 'path must start with "/"'],
    ['GET', '/x', ['novalue'], [], '--query expects key=value'],
    ['GET', '/x', [], ['=v'], '--header expects name=value'],
  ])('refuses %s %s', (method, path, query, headers, message) => {
    expect(() => parseApiRequest(method, path, query, headers)).toThrow(UsageError);
    expect(() => parseApiRequest(method, path, query, headers)).toThrow(message);
  });
});
