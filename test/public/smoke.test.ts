import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

it('serves capabilities', async () => {
  const res = await fetch(`${app.baseUrl}/api/v2/public/capabilities`);
  expect(res.status).toBe(200);
  expect(res.headers.get('x-request-id')).toBeTruthy();
});
