// The generator is judged by Ajv: everything `arbitrary` makes validates, everything
// `invalidArbitrary` makes does not. Runs on fixed schemas and on every schema of the real spec.
import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  arbitrary,
  describeCase,
  HOSTILE_CHARS,
  invalidArbitrary,
  invalidCases,
  UNKNOWN_FIELDS,
} from './arbitrary.js';
import type { Schema } from './json-schema.js';
import { resolvePointer } from './json-pointer.js';
import { createSchemaValidator } from './schema-validator.js';
import { loadSpec, schemaResolver, walkOperations, type OpenApiDocument } from './spec-walk.js';

const SAMPLES = 150;
// Fewer per spec schema: there will be hundreds of them.
const SPEC_SAMPLES = 30;

const fixtures: OpenApiDocument = {
  openapi: '3.1.0',
  paths: {},
  components: {
    schemas: {
      Role: { type: 'string', enum: ['owner', 'member'] },
      Named: {
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string', minLength: 1, maxLength: 10 } },
      },
      Tree: {
        type: 'object',
        additionalProperties: false,
        required: ['label'],
        properties: {
          label: { type: 'string' },
          children: { type: 'array', items: { $ref: '#/components/schemas/Tree' } },
        },
      },
    },
  },
};
const resolve = (ref: string) => resolvePointer(fixtures, ref) as Schema;
const ajv = createSchemaValidator(fixtures);

type Case = [string, { given: Schema; want: { refusable: boolean } }];
const refusable = { refusable: true };
const cases: Case[] = [
  ['any value', { given: true, want: { refusable: false } }],
  ['empty schema', { given: {}, want: { refusable: false } }],
  ['string', { given: { type: 'string' }, want: refusable }],
  ['string with lengths', { given: { type: 'string', minLength: 2, maxLength: 5 }, want: refusable }],
  [
    'string with a pattern',
    { given: { type: 'string', pattern: '^[a-z][a-z0-9-]{2,30}$' }, want: refusable },
  ],
  ['uuid', { given: { type: 'string', format: 'uuid' }, want: refusable }],
  ['date-time', { given: { type: 'string', format: 'date-time' }, want: refusable }],
  ['email', { given: { type: 'string', format: 'email', maxLength: 254 }, want: refusable }],
  ['uri', { given: { type: 'string', format: 'uri' }, want: refusable }],
  ['hostname', { given: { type: 'string', format: 'hostname' }, want: refusable }],
  [
    'nullable string with maxLength',
    { given: { type: ['string', 'null'], maxLength: 200 }, want: refusable },
  ],
  ['string enum', { given: { type: 'string', enum: ['a', 'b'] }, want: refusable }],
  ['nullable enum', { given: { type: ['string', 'null'], enum: ['a', null] }, want: refusable }],
  ['const', { given: { const: 'fixed' }, want: refusable }],
  ['integer', { given: { type: 'integer' }, want: refusable }],
  ['int32 with a minimum', { given: { type: 'integer', format: 'int32', minimum: 0 }, want: refusable }],
  [
    'int64 page size',
    { given: { type: 'integer', format: 'int64', minimum: 1, maximum: 100 }, want: refusable },
  ],
  [
    'exclusive bounds',
    { given: { type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 10 }, want: refusable },
  ],
  ['multipleOf', { given: { type: 'integer', multipleOf: 5, minimum: 3, maximum: 42 }, want: refusable }],
  ['nullable int32', { given: { type: ['integer', 'null'], format: 'int32', minimum: 0 }, want: refusable }],
  ['number in a range', { given: { type: 'number', minimum: -1.5, maximum: 2.5 }, want: refusable }],
  ['boolean', { given: { type: 'boolean' }, want: refusable }],
  ['null', { given: { type: 'null' }, want: refusable }],
  [
    'array of uuids',
    {
      given: { type: 'array', items: { type: 'string', format: 'uuid' }, minItems: 1, maxItems: 3 },
      want: refusable,
    },
  ],
  [
    'unique array',
    {
      given: {
        type: 'array',
        items: { type: 'integer', minimum: 0, maximum: 9 },
        uniqueItems: true,
        maxItems: 4,
      },
      want: refusable,
    },
  ],
  [
    'closed object with a nested closed object',
    {
      given: {
        type: 'object',
        additionalProperties: false,
        required: ['email', 'grant'],
        properties: {
          email: { type: 'string', format: 'email' },
          name: { type: ['string', 'null'], maxLength: 100 },
          grant: {
            type: 'object',
            additionalProperties: false,
            required: ['kind'],
            properties: {
              kind: { type: 'string', enum: ['all', 'project'] },
              id: { type: 'string', format: 'uuid' },
            },
          },
        },
      },
      want: refusable,
    },
  ],
  [
    'dictionary',
    { given: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 } }, want: refusable },
  ],
  ['oneOf by type', { given: { oneOf: [{ type: 'string' }, { type: 'object' }] }, want: refusable }],
  ['anyOf', { given: { anyOf: [{ type: 'integer', minimum: 0 }, { type: 'null' }] }, want: refusable }],
  [
    'allOf',
    {
      given: {
        allOf: [
          { $ref: '#/components/schemas/Named' },
          { type: 'object', properties: { role: { $ref: '#/components/schemas/Role' } } },
        ],
      },
      want: refusable,
    },
  ],
  ['$ref to an enum', { given: { $ref: '#/components/schemas/Role' }, want: refusable }],
  ['recursive $ref', { given: { $ref: '#/components/schemas/Tree' }, want: refusable }],
];

describe('arbitrary', () => {
  it.each(cases)('%s: generated values validate', (_name, { given }) => {
    for (const value of fc.sample(arbitrary(given, { resolve }), SAMPLES)) {
      expect(ajv.errors(given, value), JSON.stringify(value)).toEqual([]);
    }
  });

  it.each(cases)('%s: full values validate too', (_name, { given }) => {
    for (const value of fc.sample(arbitrary(given, { resolve, full: true }), 30)) {
      expect(ajv.errors(given, value), JSON.stringify(value)).toEqual([]);
    }
  });
});

describe('invalidCases and invalidArbitrary', () => {
  it.each(cases)('%s: every case makes values that are refused', (_name, { given, want }) => {
    const bad = invalidCases(given, { resolve });
    expect(bad.length > 0).toBe(want.refusable);
    for (const c of bad) {
      for (const value of fc.sample(c.arb, 30)) {
        expect(ajv.errors(given, value), `${describeCase(c)}: ${JSON.stringify(value)}`).not.toEqual([]);
      }
    }
    expect(invalidArbitrary(given, { resolve }) !== null).toBe(want.refusable);
  });

  // The conformance run's failure messages name the broken rule by these descriptions.
  it('names each broken rule by where it is and what it is', () => {
    const schema = cases.find(([n]) => n.startsWith('closed object'))![1].given;
    const names = invalidCases(schema, { resolve }).map(describeCase);
    expect(names).toEqual(
      expect.arrayContaining([
        '/: a string, not object',
        '/: missing required email',
        `/: unknown field ${UNKNOWN_FIELDS[0]}`,
        '/email: not format email',
        '/name: longer than 100',
        '/name: a boolean, not string or null',
        '/grant: missing required kind',
        '/grant/kind: outside the enum',
        '/grant/id: not format uuid',
      ]),
    );
    // null is allowed there, so it is no wrong type.
    expect(names).not.toContain('/name: null, not string or null');
    expect(new Set(names).size).toBe(names.length);
  });

  it('hostile strings hold every hostile character, NUL first, within the lengths', () => {
    const all = HOSTILE_CHARS.join('');
    const cases: [string, { given: Schema; want: (v: string) => boolean }][] = [
      ['free text', { given: { type: 'string' }, want: (v) => v === all }],
      ['a short maximum', { given: { type: 'string', maxLength: 2 }, want: (v) => v === '\u0000\u0001' }],
      [
        'a long minimum',
        { given: { type: 'string', minLength: 20 }, want: (v) => v.startsWith(all) && [...v].length === 20 },
      ],
      ['a pattern wins', { given: { type: 'string', pattern: '^[a-z]+$' }, want: (v) => /^[a-z]+$/.test(v) }],
    ];
    for (const [name, { given, want }] of cases) {
      const [value] = fc.sample(arbitrary(given, { hostile: true }), 1) as string[];
      expect(want(value!), `${name}: ${JSON.stringify(value)}`).toBe(true);
    }
  });

  it('an unknown keyword of the subset fails loudly', () => {
    expect(() => arbitrary({ type: 'string', format: 'no-such-format' })).toThrow(/format "no-such-format"/);
  });
});

// Every schema the conformance run will feed the generator, from the real spec.
describe('the bundled spec', () => {
  const doc = loadSpec();
  const specAjv = createSchemaValidator(doc);
  const specResolve = schemaResolver(doc);
  const requestSchemas = walkOperations(doc).flatMap((op) => [
    ...op.parameters.map((p): [string, Schema] => [`${op.operationId} ${p.in} ${p.name}`, p.schema]),
    ...(op.jsonBody ? [[`${op.operationId} body`, op.jsonBody] as [string, Schema]] : []),
  ]);
  const responseSchemas = walkOperations(doc).flatMap((op) =>
    op.responses.flatMap((r) =>
      r.media
        .filter((m) => m.schema !== undefined)
        .map((m): [string, Schema] => [`${op.operationId} ${r.status} ${m.mediaType}`, m.schema!]),
    ),
  );

  it.each(requestSchemas)('%s: valid and invalid values are told apart', (_name, schema) => {
    for (const value of fc.sample(arbitrary(schema, { resolve: specResolve }), SPEC_SAMPLES)) {
      expect(specAjv.errors(schema, value), JSON.stringify(value)).toEqual([]);
    }
    const bad = invalidArbitrary(schema, { resolve: specResolve });
    for (const value of bad ? fc.sample(bad, SPEC_SAMPLES) : []) {
      expect(specAjv.errors(schema, value), JSON.stringify(value)).not.toEqual([]);
    }
  });

  it.each(responseSchemas)('%s: generated values validate', (_name, schema) => {
    for (const value of fc.sample(arbitrary(schema, { resolve: specResolve }), SPEC_SAMPLES)) {
      expect(specAjv.errors(schema, value), JSON.stringify(value)).toEqual([]);
    }
  });
});
