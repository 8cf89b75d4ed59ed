// Request bodies reject unknown fields (DECISIONS.md §1): which schemas are open, and where in a
// valid body the conformance run slips an unknown field in.
import { describe, expect, it } from 'vitest';
import { closedObjectSlots, openObjectSchemas, withFieldAt } from './closed-objects.js';
import type { Schema } from './json-schema.js';

describe('openObjectSchemas', () => {
  const resolve = () => ({ type: 'object', properties: { x: { type: 'string' } } }) as const;
  const cases: [string, { given: Schema; want: string[] }][] = [
    [
      'closed',
      {
        given: { type: 'object', additionalProperties: false, properties: { a: { type: 'string' } } },
        want: [],
      },
    ],
    ['open at the root', { given: { type: 'object', properties: { a: { type: 'string' } } }, want: ['/'] }],
    [
      'open nested inside an array',
      {
        given: {
          type: 'object',
          additionalProperties: false,
          properties: { a: { type: 'array', items: { type: 'object' } } },
        },
        want: ['/properties/a/items'],
      },
    ],
    [
      'a dictionary is a deliberate choice',
      { given: { type: 'object', additionalProperties: { type: 'integer' } }, want: [] },
    ],
    ['open behind a $ref', { given: { $ref: '#/x' }, want: ['/'] }],
    ['not an object', { given: { type: 'string' }, want: [] }],
  ];
  it.each(cases)('%s', (_name, { given, want }) => {
    expect(openObjectSchemas(given, resolve)).toEqual(want);
  });
});

describe('closedObjectSlots', () => {
  const grant: Schema = {
    type: 'object',
    additionalProperties: false,
    properties: { kind: { const: 'project' }, zz_unknown_field: { type: 'string' } },
  };
  const body: Schema = {
    type: 'object',
    additionalProperties: false,
    properties: {
      grants: { type: 'array', items: grant },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      scope: { oneOf: [{ type: 'string' }, grant] },
    },
  };
  // Stands in for Ajv: a string matches the first branch, an object the second.
  const matches = (s: Schema, v: unknown) =>
    typeof s === 'object' && (s.type === 'string') === (typeof v === 'string');
  const cases: [string, { given: unknown; want: { at: string; field: string }[] }][] = [
    ['the root', { given: {}, want: [{ at: '', field: 'zz_unknown_field' }] }],
    [
      'objects in an array, with a name they do not declare',
      {
        given: { grants: [{ kind: 'project' }] },
        want: [
          { at: '', field: 'zz_unknown_field' },
          { at: '/grants/0', field: 'zzUnknownField' },
        ],
      },
    ],
    ['not a dictionary', { given: { labels: { a: 'b' } }, want: [{ at: '', field: 'zz_unknown_field' }] }],
    [
      'the oneOf branch the value matches',
      {
        given: { scope: { kind: 'project' } },
        want: [
          { at: '', field: 'zz_unknown_field' },
          { at: '/scope', field: 'zzUnknownField' },
        ],
      },
    ],
  ];
  it.each(cases)('%s', (_name, { given, want }) => {
    expect(closedObjectSlots(body, given, () => true, matches)).toEqual(want);
  });

  it('withFieldAt adds the field at the pointer and leaves the original alone', () => {
    const given = { grants: [{ kind: 'project' }] };
    expect(withFieldAt(given, '/grants/0', 'x', 1)).toEqual({ grants: [{ kind: 'project', x: 1 }] });
    expect(given).toEqual({ grants: [{ kind: 'project' }] });
  });
});
