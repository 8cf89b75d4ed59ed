// POST /public/client-errors: 204 always, truncation, and a per-source limit that never shows.
import { createClient, type SvcApiError } from '@svcplatform/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let app: TestApp;
let client: ReturnType<typeof createClient>;

beforeAll(async () => {
  app = await startTestApp();
  client = createClient({ baseUrl: app.baseUrl, retries: 0 });
});
afterAll(() => app.close());

const stored = () =>
  app.sql<{ error_id: string; message: string; stack: string | null; digest: string | null; source: string }[]>`
    select error_id, message, stack, digest, source from client_errors order by id`;

it('stores a report, truncating the message to 2,000 and the stack to 8,000 characters', async () => {
  await app.sql`delete from client_errors`;
  // Astral characters count as one character each and are never split.
  const message = '😀'.repeat(2500);
  const stack = 'at f (x.js:1:1)\n'.repeat(1000);
  const answer = await client.publicClientErrorsCreate({
    body: { error_id: 'e1', message, stack, digest: 'abc123', url: 'https://app.example/x', user_agent: 'UA/1' },
  });
  expect(answer).toBeUndefined();
  const [row] = await stored();
  expect(row!.error_id).toBe('e1');
  expect(Array.from(row!.message)).toHaveLength(2000);
  expect(row!.message).toBe('😀'.repeat(2000));
  expect(row!.stack).toBe(stack.slice(0, 8000));
  expect(row!.digest).toBe('abc123');
  expect(row!.source).toBe('127.0.0.1');
});

it('answers 204 identically once the per-source limit trips, and stops storing', async () => {
  await app.sql`delete from client_errors`;
  await app.sql`delete from rate_limit_buckets`;
  const answers: { status: number; body: string }[] = [];
  for (let i = 0; i < 40; i += 1) {
    const res = await fetch(`${app.baseUrl}/api/v2/public/client-errors`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error_id: `e${i}`, message: 'boom' }),
    });
    answers.push({ status: res.status, body: await res.text() });
    expect(res.headers.get('retry-after')).toBeNull();
  }
  expect(new Set(answers.map((a) => `${a.status}:${a.body}`))).toEqual(new Set(['204:']));
  expect((await stored()).length).toBe(30);
});

it('refuses a body that breaks the contract with 400 and stores nothing', async () => {
  await app.sql`delete from client_errors`;
  await app.sql`delete from rate_limit_buckets`;
  for (const body of [
    { error_id: 'e', message: 'm', extra: 1 },
    { error_id: 'e' },
    { error_id: 5, message: 'm' },
  ]) {
    const err = await client.publicClientErrorsCreate({ body: body as never }).then(
      () => null,
      (e: unknown) => e as SvcApiError,
    );
    expect(err?.status).toBe(400);
    expect(err?.code).toBe('invalid-request');
  }
  const res = await fetch(`${app.baseUrl}/api/v2/public/client-errors`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"error_id":',
  });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { code: string }).code).toBe('invalid-request');
  expect(await stored()).toEqual([]);
});
