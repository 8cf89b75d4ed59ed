// A request body its Content-Encoding does not decode is the caller's fault (issue 26): 400
// invalid-request, never a 500 or an error in the log; a body that does decode is read as usual.
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { uniqueEmail } from '../support/auth.js';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ env: { SOURCE_RATE_LIMIT_SCALE: '1000' } });
});
afterAll(async () => {
  await app.close();
});

const forgot = (encoding: string, body: Buffer) =>
  fetch(`${app.baseUrl}/api/v2/auth/password/forgot`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-encoding': encoding },
    body: new Uint8Array(body),
  });

const json = Buffer.from(JSON.stringify({ email: 'someone@example.test' }));
const queued = async () =>
  (await app.sql<{ n: number }[]>`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'send_password_reset'`)[0]!.n;

describe('Content-Encoding', () => {
  it.each([
    ['gzip that is not gzip', 'gzip', Buffer.from('{"email":"someone@example.test"}')],
    ['truncated gzip', 'gzip', gzipSync(json).subarray(0, 12)],
    ['deflate that is not deflate', 'deflate', Buffer.from('plain text')],
    ['br that is not brotli', 'br', Buffer.from('plain text, not brotli at all')],
  ])('refuses %s with 400 invalid-request and logs no error', async (_why, encoding, body) => {
    const errorsBefore = app.logs.filter((l) => (l.level as number) >= 50).length;
    const before = await queued();
    const res = await forgot(encoding, body);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await res.json()) as { code: string; errors: { location: string; pointer: string }[] };
    expect(problem.code).toBe('invalid-request');
    expect(problem.errors).toEqual([expect.objectContaining({ location: 'header', pointer: 'content-encoding' })]);
    expect(app.logs.filter((l) => (l.level as number) >= 50)).toHaveLength(errorsBefore);
    expect(await queued()).toBe(before);
  });

  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ])('reads a body that %s decodes', async (encoding, compress) => {
    const body = Buffer.from(JSON.stringify({ email: uniqueEmail(encoding) }));
    const res = await forgot(encoding, compress(body));
    expect([res.status, await res.json()]).toEqual([200, { accepted: true }]);
  });
});
