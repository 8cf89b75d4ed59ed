import { describe, expect, it } from 'vitest';
import { accumulate, CoercionError, coerceValue } from '../src/coerce.js';

describe('coerceValue', () => {
  it.each([
    ['string', { given: ['string', 'abc'], want: 'abc' }],
    ['a string "null" stays a string', { given: ['string', 'null'], want: 'null' }],
    ['a nullable string "null" is null', { given: ['string', 'null', true], want: null }],
    ['uuid is a string', { given: ['uuid', '7f0c'], want: '7f0c' }],
    ['integer', { given: ['integer', '-42'], want: -42 }],
    ['integer null', { given: ['integer', 'null'], want: null }],
    ['number', { given: ['number', '2.5e3'], want: 2500 }],
    ['boolean', { given: ['boolean', 'false'], want: false }],
    ['object', { given: ['object', '{"a":[1]}'], want: { a: [1] } }],
    ['json', { given: ['json', '"x"'], want: 'x' }],
    ['json null', { given: ['json', 'null'], want: null }],
    ['json object', { given: ['json', '{"a":1}'], want: { a: 1 } }],
    ['object null', { given: ['object', 'null'], want: null }],
    ['enum', { given: ['allow|deny', 'deny'], want: 'deny' }],
    ['enum listing null', { given: ['a|b|null', 'null'], want: null }],
    ['array item', { given: ['integer[]', '7'], want: [7] }],
    ['array as JSON', { given: ['string[]', '["a","b"]'], want: ['a', 'b'] }],
    ['enum values, comma-separated', { given: ['gamemode|position[]', 'gamemode, position'], want: ['gamemode', 'position'] }],
    ['a string with a comma, one item', { given: ['string[]', 'a,b'], want: ['a,b'] }],
    ['array of objects, one at a time', { given: ['object[]', '{"a":1}'], want: [{ a: 1 }] }],
    ['array null', { given: ['string[]', 'null'], want: null }],
  ] as const)('%s', (_name, { given, want }) => {
    const [type, raw, nullable] = given as unknown as [string, string, boolean | undefined];
    expect(coerceValue(type, raw, nullable)).toEqual(want);
  });

  it.each([
    ['integer', 'x1', 'expected an integer; got "x1"'],
    ['integer', '1.5', 'expected an integer; got "1.5"'],
    ['integer', '99999999999999999999', 'integer out of range'],
    ['number', '', 'expected a number'],
    ['boolean', 'yes', 'expected true or false'],
    ['object', '{a:1}', 'expected JSON'],
    ['allow|deny', 'maybe', 'expected one of allow, deny; got "maybe"'],
    ['allow|deny', 'null', 'expected one of allow, deny'],
    ['string[]', '[1', 'expected a JSON array'],
    ['gamemode|position[]', 'gamemode,health', 'expected one of gamemode, position; got "health"'],
  ])('refuses %s %j', (type, raw, message) => {
    expect(() => coerceValue(type, raw)).toThrow(CoercionError);
    expect(() => coerceValue(type, raw)).toThrow(message);
  });
});

describe('accumulate', () => {
  it('collects repeated array flags', () => {
    let value: unknown;
    for (const raw of ['a', '["b","c"]', 'd']) value = accumulate('string[]', raw, value);
    expect(value).toEqual(['a', 'b', 'c', 'd']);
  });

  it('lets the last scalar win', () => {
    expect(accumulate('integer', '2', 1)).toBe(2);
  });
});
