import type * as SdkModule from '@svcplatform/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import type * as DescribeFailureModule from '../src/describe-failure.js';
import { CliError, UsageError } from '../src/errors.js';
import { ExitCode } from '../src/exit-codes.js';
import { ensureSdkBuilt } from './support/build.js';

// describe-failure.ts imports the built SDK (as svcctl does at run time), so build it first.
type Sdk = typeof SdkModule;
let SvcApiError: Sdk['SvcApiError'];
let SvcNetworkError: Sdk['SvcNetworkError'];
let SvcTimeoutError: Sdk['SvcTimeoutError'];
let describeFailure: typeof DescribeFailureModule.describeFailure;
beforeAll(async () => {
  ensureSdkBuilt();
  ({ SvcApiError, SvcNetworkError, SvcTimeoutError } = await import('@svcplatform/sdk'));
  ({ describeFailure } = await import('../src/describe-failure.js'));
}, 120_000);

const apiError = (over: Partial<ConstructorParameters<Sdk['SvcApiError']>[0]> = {}) =>
  new SvcApiError({
    status: 400,
    code: 'invalid-request',
    title: 'Invalid request',
    detail: 'The request does not match the API contract.',
    requestId: 'req-1',
    errors: [],
    details: null,
    retryAfter: null,
    problem: {},
    operationId: null,
    ...over,
  });

describe('describeFailure', () => {
  it('prints a problem with its validation errors', () => {
    const r = describeFailure(
      apiError({
        errors: [
          { location: 'body', pointer: '/port', message: 'must be integer' },
          { location: 'query', pointer: 'page', message: 'must be >= 1' },
        ],
      }),
    );
    expect(r.exitCode).toBe(ExitCode.invalid);
    expect(r.text).toBe(
      [
        'error: Invalid request (HTTP 400)',
        '  The request does not match the API contract.',
        '  code:       invalid-request',
        '  request id: req-1',
        '  validation errors:',
        '    - body /port: must be integer',
        '    - query page: must be >= 1',
        '',
      ].join('\n'),
    );
  });

  it('prints details and Retry-After when present', () => {
    const r = describeFailure(
      apiError({
        status: 429,
        code: 'rate-limited',
        title: 'Too many requests',
        detail: '',
        details: { limit: 5 },
        retryAfter: 30,
      }),
    );
    expect(r.exitCode).toBe(ExitCode.rateLimited);
    expect(r.text).toBe(
      [
        'error: Too many requests (HTTP 429)',
        '  code:        rate-limited',
        '  details:     {"limit":5}',
        '  retry after: 30s',
        '  request id:  req-1',
        '',
      ].join('\n'),
    );
  });

  it('says how to elevate when the operation needs it (403 elevation-required)', () => {
    const r = describeFailure(
      apiError({ status: 403, code: 'elevation-required', title: 'Elevation required', detail: '' }),
    );
    expect(r.exitCode).toBe(ExitCode.auth);
    expect(r.text).toContain('  code:       elevation-required\n');
    expect(r.text).toMatch(/svcctl sudo elevate, or svcctl sudo totp verify/);
  });

  it.each([
    [
      'a usage error',
      () => new UsageError('bad flag'),
      ExitCode.usage,
      'error: bad flag\n(add --help for usage)\n',
    ],
    [
      'a CLI error',
      () => new CliError('config.yaml is broken'),
      ExitCode.failure,
      'error: config.yaml is broken\n',
    ],
    [
      'a timeout',
      () => new SvcTimeoutError('GET', 'http://h/api/v2/x', 10),
      ExitCode.network,
      'error: no answer: GET http://h/api/v2/x got no answer within 10 ms\n',
    ],
    ['anything else', () => new Error('boom'), ExitCode.failure, 'error: boom\n'],
  ])('%s', (_name, makeError, exitCode, text) => {
    expect(describeFailure(makeError(), {})).toEqual({ exitCode, text });
  });

  it('points at the base URL settings when the server cannot be reached', () => {
    const r = describeFailure(
      new SvcNetworkError('GET', 'http://h/api/v2/x', new Error('connect ECONNREFUSED')),
    );
    expect(r.exitCode).toBe(ExitCode.network);
    expect(r.text).toContain('cannot reach the API: GET http://h/api/v2/x failed: connect ECONNREFUSED');
    expect(r.text).toContain('SVCCTL_BASE_URL');
  });

  it('shows the stack only with SVCCTL_DEBUG', () => {
    expect(describeFailure(new Error('boom'), { SVCCTL_DEBUG: '1' }).text).toContain('at ');
  });
});
