// The spec walk's small decisions, which every conformance test leans on: who needs credentials,
// which documented response an answer falls under, which media entry a Content-Type matches.
import { describe, expect, it } from 'vitest';
import {
  documentedMedia,
  documentedResponse,
  loadSpec,
  requiresAuth,
  walkOperations,
  type SecurityRequirement,
  type WalkedOperation,
} from './spec-walk.js';

describe('requiresAuth', () => {
  const cases: [string, { given: SecurityRequirement[]; want: boolean }][] = [
    ['public (security: [])', { given: [], want: false }],
    ['bearer', { given: [{ bearer: [] }], want: true }],
    ['bearer or anonymous ({})', { given: [{ bearer: [] }, {}], want: false }],
    ['either of two schemes', { given: [{ bearer: [] }, { cookie: [] }], want: true }],
  ];
  it.each(cases)('%s', (_name, { given, want }) => {
    expect(requiresAuth(given)).toBe(want);
  });
});

describe('documentedResponse and documentedMedia', () => {
  const op = {
    responses: [
      { status: '200', media: [{ mediaType: 'application/json', schema: true }] },
      { status: '404', media: [] },
      { status: '4XX', media: [{ mediaType: 'application/problem+json', schema: true }] },
      { status: 'default', media: [{ mediaType: 'image/*', schema: true }] },
    ],
  } as unknown as WalkedOperation;
  const statuses: [string, { given: number; want: string | undefined }][] = [
    ['an exact code', { given: 200, want: '200' }],
    ['an exact code before its range', { given: 404, want: '404' }],
    ['a range', { given: 409, want: '4XX' }],
    ['default', { given: 503, want: 'default' }],
  ];
  it.each(statuses)('status: %s', (_name, { given, want }) => {
    expect(documentedResponse(op, given)?.status).toBe(want);
  });

  const media: [string, { given: { status: number; contentType: string }; want: string | undefined }][] = [
    [
      'with parameters',
      { given: { status: 200, contentType: 'application/json; charset=utf-8' }, want: 'application/json' },
    ],
    ['a wildcard', { given: { status: 503, contentType: 'image/png' }, want: 'image/*' }],
    ['an undocumented type', { given: { status: 200, contentType: 'text/html' }, want: undefined }],
  ];
  it.each(media)('media type: %s', (_name, { given, want }) => {
    expect(documentedMedia(documentedResponse(op, given.status)!, given.contentType)?.mediaType).toBe(want);
  });
});

describe('walkOperations on the bundled spec', () => {
  const doc = loadSpec();
  it('finds every operation the spec declares', () => {
    const declared = Object.values(doc.paths).flatMap((item) =>
      Object.values(item).filter((v) => typeof v === 'object' && v !== null && 'operationId' in v),
    );
    expect(walkOperations(doc)).toHaveLength(declared.length);
  });
  it('resolves every parameter, body and response reference', () => {
    const text = JSON.stringify(
      walkOperations(doc).map((o) => [o.parameters, o.responses.map((r) => r.media.map((m) => m.mediaType))]),
    );
    expect(text).not.toContain('#/components/parameters');
    expect(text).not.toContain('#/components/responses');
  });
});
