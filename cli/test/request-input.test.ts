import { describe, expect, it } from 'vitest';
import { UsageError } from '../src/errors.js';
import { flagInputs } from '../src/operation-inputs.js';
import type { CliOperation } from '../src/operation.js';
import { buildRequest } from '../src/request-input.js';

const op: CliOperation = {
  operationId: 'ruleUpdate',
  method: 'patch',
  path: '/services/{service_id}/rules/{rule_id}',
  summary: '',
  tags: [],
  security: ['bearer'],
  capability: null,
  cli: ['rule', 'update'],
  // Declared out of path order on purpose: positionals follow the path.
  parameters: [
    { name: 'rule_id', in: 'path', required: true, type: 'uuid', description: '' },
    { name: 'service_id', in: 'path', required: true, type: 'uuid', description: '' },
    { name: 'dry_run', in: 'query', required: false, type: 'boolean', description: '' },
    { name: 'X-Captcha-Token', in: 'header', required: false, type: 'string', description: '' },
  ],
  body: {
    required: true,
    contentType: 'application/json',
    fields: [
      { name: 'port', required: true, type: 'integer', description: '' },
      { name: 'note', required: false, type: 'string', description: '' },
    ],
  },
  successStatus: 200,
  responseType: 'application/json',
};

const inputs = flagInputs(op);
const values = (given: Record<string, unknown>) =>
  inputs.map((input) => ({ input, value: given[input.name] }));

describe('buildRequest', () => {
  it.each([
    [
      'positionals in path order, flags by location',
      {
        given: { flags: { dry_run: true, 'X-Captcha-Token': 'cap', port: 22 }, data: undefined },
        want: {
          path: { service_id: 'S', rule_id: 'R' },
          query: { dry_run: true },
          headers: { 'X-Captcha-Token': 'cap' },
          body: { port: 22 },
        },
      },
    ],
    [
      '--data alone',
      {
        given: { flags: {}, data: { port: 80, note: 'web' } },
        want: {
          path: { service_id: 'S', rule_id: 'R' },
          query: {},
          headers: {},
          body: { port: 80, note: 'web' },
        },
      },
    ],
    [
      'flags override --data field by field',
      {
        given: { flags: { note: 'ssh' }, data: { port: 22, note: 'old', extra: 1 } },
        want: {
          path: { service_id: 'S', rule_id: 'R' },
          query: {},
          headers: {},
          body: { port: 22, note: 'ssh', extra: 1 },
        },
      },
    ],
    [
      'an explicit null is sent',
      {
        given: { flags: { note: null, port: 1 }, data: undefined },
        want: {
          path: { service_id: 'S', rule_id: 'R' },
          query: {},
          headers: {},
          body: { port: 1, note: null },
        },
      },
    ],
    [
      'a non-object --data goes to the server as is',
      {
        given: { flags: {}, data: [1, 2] },
        want: { path: { service_id: 'S', rule_id: 'R' }, query: {}, headers: {}, body: [1, 2] },
      },
    ],
  ])('%s', (_name, { given, want }) => {
    expect(buildRequest(op, ['S', 'R'], values(given.flags), given.data)).toEqual(want);
  });

  it.each([
    [
      'a required field is missing',
      { flags: { note: 'x' }, data: undefined },
      'missing required body field: --port (port)',
    ],
    [
      'nothing at all for a required body',
      { flags: {}, data: undefined },
      'missing required body field: --port (port)',
    ],
    [
      '--data is not an object but flags are given',
      { flags: { port: 1 }, data: 'x' },
      '--data must be a JSON object',
    ],
  ])('refuses when %s', (_name, given, message) => {
    expect(() => buildRequest(op, ['S', 'R'], values(given.flags), given.data)).toThrow(UsageError);
    expect(() => buildRequest(op, ['S', 'R'], values(given.flags), given.data)).toThrow(message);
  });

  it('sends no body for an optional body left empty', () => {
    const optional: CliOperation = {
      ...op,
      body: {
        ...op.body!,
        required: false,
        fields: [{ name: 'note', required: false, type: 'string', description: '' }],
      },
    };
    const r = buildRequest(
      optional,
      ['S', 'R'],
      flagInputs(optional).map((input) => ({ input, value: undefined })),
      undefined,
    );
    expect(r).toEqual({ path: { service_id: 'S', rule_id: 'R' }, query: {}, headers: {} });
  });
});
