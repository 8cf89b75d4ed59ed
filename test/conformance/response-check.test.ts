// The response checker is the oracle of the whole conformance run, so each rule it enforces is
// shown to fire on an answer that breaks it, and to stay quiet on one that does not.
import { describe, expect, it } from 'vitest';
import { createResponseChecker, receive } from './response-check.js';
import { createSchemaValidator } from './schema-validator.js';
import type { OpenApiDocument, WalkedOperation } from './spec-walk.js';

const doc: OpenApiDocument = {
  openapi: '3.1.0',
  paths: {},
  components: {
    schemas: {
      ErrorCode: { type: 'string', enum: ['not-found', 'internal-error'] },
      Problem: {
        type: 'object',
        required: ['code', 'request_id', 'status'],
        properties: {
          code: { $ref: '#/components/schemas/ErrorCode' },
          request_id: { type: 'string' },
          status: { type: 'integer' },
        },
      },
      Thing: { type: 'object', required: ['id'], properties: { id: { type: 'string', format: 'uuid' } } },
    },
  },
};
const op = {
  operationId: 'thingGet',
  method: 'get',
  responses: [
    {
      status: '200',
      media: [{ mediaType: 'application/json', schema: { $ref: '#/components/schemas/Thing' } }],
    },
    { status: '202', media: [] },
    { status: '204', media: [] },
    {
      status: '404',
      media: [{ mediaType: 'application/problem+json', schema: { $ref: '#/components/schemas/Problem' } }],
    },
  ],
} as unknown as WalkedOperation;
const checker = createResponseChecker(doc, createSchemaValidator(doc));

const ID = 'req-1';
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: {
      'content-type': status >= 400 ? 'application/problem+json' : 'application/json',
      'x-request-id': ID,
      ...headers,
    },
  });
const problem = (status: number, extra: object = {}) => ({
  code: 'not-found',
  request_id: ID,
  status,
  ...extra,
});

type Case = [string, { given: () => Response; want: RegExp[] }];
const cases: Case[] = [
  [
    'a documented answer',
    { given: () => json(200, { id: '6f1c1c1e-8a4e-4a52-9b1e-0a4f4c3c2b1a' }), want: [] },
  ],
  [
    'a documented empty answer',
    { given: () => new Response(null, { status: 204, headers: { 'x-request-id': ID } }), want: [] },
  ],
  ['a documented problem', { given: () => json(404, problem(404)), want: [] }],
  ['no X-Request-Id', { given: () => new Response(null, { status: 204 }), want: [/no X-Request-Id/] }],
  [
    'an undocumented status',
    { given: () => json(409, problem(409)), want: [/status 409 is not documented/] },
  ],
  [
    'a body that breaks the schema',
    { given: () => json(200, { id: 'not-a-uuid' }), want: [/\/id must match format "uuid"/] },
  ],
  [
    'an undocumented media type',
    {
      given: () => json(200, {}, { 'content-type': 'text/html' }),
      want: [/Content-Type text\/html is not documented/],
    },
  ],
  [
    'a body where none is documented',
    { given: () => json(202, { queued: true }), want: [/status 202 is documented without content/] },
  ],
  [
    'an error as plain JSON',
    {
      given: () => json(404, problem(404), { 'content-type': 'application/json' }),
      want: [/Content-Type application\/json is not documented/, /not application\/problem\+json/],
    },
  ],
  [
    'an unknown error code',
    {
      given: () => json(404, problem(404, { code: 'teapot' })),
      want: [
        /must be equal to one of the allowed values/,
        /problem code "teapot" is not in the spec's ErrorCode enum/,
      ],
    },
  ],
  [
    'a request_id that differs from the header',
    {
      given: () => json(404, problem(404, { request_id: 'other' })),
      want: [/request_id "other" differs from X-Request-Id req-1/],
    },
  ],
];

describe('response violations', () => {
  it.each(cases)('%s', async (_name, { given, want }) => {
    const violations = checker.violations(op, await receive(given()));
    expect(violations, violations.join('\n')).toHaveLength(want.length);
    want.forEach((pattern, i) => expect(violations[i]).toMatch(pattern));
  });
});

describe('answers outside any operation (unknown route, wrong method)', () => {
  it('are held to the Problem schema and the problem rules', async () => {
    const violations = checker.violations(
      null,
      await receive(json(404, problem(404, { code: 'teapot', status: 400 }))),
    );
    expect(violations).toEqual([
      'problem: /code must be equal to one of the allowed values',
      `problem code "teapot" is not in the spec's ErrorCode enum`,
      'problem status 400 differs from the HTTP status 404',
    ]);
  });
});
