// How inputs travel, and that a broken input is broken as the server reads it off the wire.
import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Schema } from './json-schema.js';
import { invalidInputCases, toRequest, toWire, validInput, type OperationInput } from './request.js';
import { createSchemaValidator } from './schema-validator.js';
import type { OpenApiDocument, WalkedOperation } from './spec-walk.js';

const doc: OpenApiDocument = { openapi: '3.1.0', paths: {}, components: {} };
const validator = createSchemaValidator(doc);
const resolve = (): Schema => true;
const body: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: { name: { type: 'string', maxLength: 3 } },
};
const op: WalkedOperation = {
  operationId: 'thingUpdate',
  method: 'put',
  path: '/things/{id}/parts/{name}',
  parameters: [
    { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
    { name: 'name', in: 'path', required: true, schema: { type: 'string', minLength: 1 } },
    { name: 'page', in: 'query', required: false, schema: { type: 'integer', minimum: 1 } },
    { name: 'tag', in: 'query', required: false, schema: { type: 'array', items: { type: 'string' } } },
    { name: 'X-Trace', in: 'header', required: true, schema: { type: 'string', maxLength: 64 } },
  ],
  requestBody: { required: true, media: [{ mediaType: 'application/json', schema: body }] },
  jsonBody: body,
  responses: [],
  security: [],
  requiresAuth: false,
};

describe('toRequest', () => {
  const input: OperationInput = {
    path: { id: '6f1c1c1e-8a4e-4a52-9b1e-0a4f4c3c2b1a', name: 'a/b c' },
    query: { page: 2, tag: ['x', 'y'] },
    headers: { 'X-Trace': 't-1' },
    body: { name: 'abc' },
  };
  const { url, init } = toRequest('http://h/api/v2', op, input);

  it('encodes path parameters as one segment each and repeats array query keys', () => {
    expect(url).toBe(
      'http://h/api/v2/things/6f1c1c1e-8a4e-4a52-9b1e-0a4f4c3c2b1a/parts/a%2Fb%20c?page=2&tag=x&tag=y',
    );
  });
  it('sends the method, header parameters and a JSON body', () => {
    const headers = init.headers as Headers;
    expect([init.method, headers.get('x-trace'), headers.get('content-type'), init.body]).toEqual([
      'PUT',
      't-1',
      'application/json',
      '{"name":"abc"}',
    ]);
  });
});

describe('toWire', () => {
  const cases: [string, { given: unknown; want: string | string[] }][] = [
    ['a number', { given: 5, want: '5' }],
    ['null', { given: null, want: '' }],
    ['an array', { given: [1, true], want: ['1', 'true'] }],
    ['an object', { given: { a: 1 }, want: '{"a":1}' }],
  ];
  it.each(cases)('%s', (_name, { given, want }) => {
    expect(toWire(given)).toEqual(want);
  });
});

describe('validInput and invalidInput', () => {
  it('valid inputs carry every required parameter, in a form that can travel', () => {
    for (const input of fc.sample(validInput(op, resolve), 100)) {
      expect(Object.keys(input.path).sort()).toEqual(['id', 'name']);
      expect(['', '.', '..']).not.toContain(input.path.name);
      expect(input.headers['X-Trace']).toMatch(/^[\x21-\x7e]*$/);
      expect(validator.errors(body, input.body)).toEqual([]);
    }
  });

  it('each invalid input breaks its one location as the server would read it', () => {
    const seen = new Set<string>();
    for (const { location, reason, input } of fc.sample(
      fc.oneof(...invalidInputCases(op, resolve, validator)),
      300,
    )) {
      seen.add(location);
      const params = op.parameters.filter(
        (p) => p.in === location || (location === 'header' && p.in === 'header'),
      );
      if (location === 'body') {
        expect(validator.errors(body, input.body), reason).not.toEqual([]);
        continue;
      }
      const section = location === 'header' ? input.headers : location === 'path' ? input.path : input.query;
      // Broken: a value the wire reading refuses, a missing required one, or an unknown name.
      const broken =
        params.some((p) =>
          p.name in section ? validator.wireErrors(p.schema, toWire(section[p.name])).length > 0 : p.required,
        ) || Object.keys(section).some((k) => !params.some((p) => p.name === k));
      expect(broken, `${reason}: ${JSON.stringify(section)}`).toBe(true);
    }
    expect([...seen].sort()).toEqual(['body', 'header', 'path', 'query']);
  });
});
