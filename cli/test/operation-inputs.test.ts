import { describe, expect, it } from 'vitest';
import { flagFor, kebabCase } from '../src/flag-names.js';
import { flagInputs } from '../src/operation-inputs.js';
import type { CliOperation } from '../src/operation.js';

describe('flag names', () => {
  it.each([
    ['error_id', '--error-id'],
    ['pageSize', '--page-size'],
    ['user_agent', '--user-agent'],
    ['A.B c', '--a-b-c'],
  ])('%s → %s', (name, flag) => {
    expect(flagFor('body', name)).toBe(flag);
  });

  it('drops the X- of a header', () => {
    expect(flagFor('header', 'X-Captcha-Token')).toBe('--captcha-token');
    expect(kebabCase('X-Request-Id')).toBe('x-request-id');
  });
});

describe('flagInputs', () => {
  const base: Omit<CliOperation, 'parameters' | 'body'> = {
    operationId: 'thingUpdate',
    method: 'patch',
    path: '/things/{id}',
    summary: '',
    tags: [],
    security: [],
    capability: null,
    cli: ['thing', 'update'],
    successStatus: 200,
    responseType: 'application/json',
  };

  it('makes one flag per query parameter, header and body field, and none for path parameters', () => {
    const inputs = flagInputs({
      ...base,
      parameters: [
        { name: 'id', in: 'path', required: true, type: 'uuid', description: '' },
        { name: 'dry_run', in: 'query', required: false, type: 'boolean', description: '' },
        { name: 'X-Captcha-Token', in: 'header', required: false, type: 'string', description: '' },
      ],
      body: {
        required: true,
        contentType: 'application/json',
        fields: [{ name: 'name', required: true, type: 'string', description: 'd' }],
      },
    });
    expect(inputs.map((i) => [i.location, i.name, i.flag])).toEqual([
      ['query', 'dry_run', '--dry-run'],
      ['header', 'X-Captcha-Token', '--captcha-token'],
      ['body', 'name', '--name'],
    ]);
  });

  it("prefixes a flag that collides with the command's own or another input's", () => {
    const inputs = flagInputs({
      ...base,
      parameters: [{ name: 'output', in: 'query', required: false, type: 'string', description: '' }],
      body: {
        required: true,
        contentType: 'application/json',
        fields: [
          { name: 'data', required: false, type: 'object', description: '' },
          { name: 'output', required: false, type: 'string', description: '' },
          { name: 'help', required: false, type: 'string', description: '' },
        ],
      },
    });
    expect(inputs.map((i) => i.flag)).toEqual([
      '--query-output',
      '--body-data',
      '--body-output',
      '--body-help',
    ]);
  });

  it('keeps --no-<name> free for a boolean', () => {
    const inputs = flagInputs({
      ...base,
      parameters: [],
      body: {
        required: false,
        contentType: 'application/json',
        fields: [
          { name: 'force', required: false, type: 'boolean', description: '' },
          { name: 'no_force', required: false, type: 'string', description: '' },
        ],
      },
    });
    expect(inputs.map((i) => i.flag)).toEqual(['--force', '--body-no-force']);
  });
});
