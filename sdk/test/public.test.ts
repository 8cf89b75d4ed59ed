// The SDK against the real app and a real database: the public reads, end to end.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestApp, type TestApp } from '../../test/support/app.js';
import { createAsset, createIncident, createReseller } from '../../server/src/features/public/store.js';
import { createClient, isSvcApiError, SvcApiError, type SvcClient } from '../src/index.js';

let app: TestApp;
let client: SvcClient;
const seenRequestIds: (string | null)[] = [];

beforeAll(async () => {
  app = await startTestApp();
  client = createClient({
    baseUrl: app.baseUrl,
    retries: 0,
    // Records X-Request-Id as it came over the wire, to compare with what the error reports.
    fetch: async (request) => {
      const response = await fetch(request);
      seenRequestIds.push(response.headers.get('x-request-id'));
      return response;
    },
  });
});

afterAll(async () => {
  await app?.close();
});

async function apiError(promise: Promise<unknown>): Promise<SvcApiError> {
  try {
    await promise;
  } catch (e) {
    if (isSvcApiError(e)) return e;
    throw e;
  }
  throw new Error('expected an SvcApiError');
}

describe('public reads through the SDK', () => {
  test('capabilities are the configured ones', async () => {
    await expect(client.publicCapabilitiesGet()).resolves.toEqual(app.config.capabilities);
  });

  test('incidents created through the store come back oldest first', async () => {
    const now = app.clock.now();
    const newer = await createIncident(
      app.sql,
      { title: 'Newer', startedAt: new Date(now.getTime() - 60_000) },
      now,
    );
    const older = await createIncident(
      app.sql,
      { title: 'Older', message: 'Looking into it', startedAt: new Date(now.getTime() - 3_600_000) },
      now,
    );
    await expect(client.publicIncidentsList()).resolves.toEqual([
      {
        id: older.id,
        title: 'Older',
        message: 'Looking into it',
        started_at: older.started_at.toISOString(),
      },
      { id: newer.id, title: 'Newer', message: null, started_at: newer.started_at.toISOString() },
    ]);
  });

  test('a client error report is accepted with 204', async () => {
    await expect(
      client.publicClientErrorsCreate({
        body: { error_id: 'sdk-1', message: 'boom', url: 'https://x.example/' },
      }),
    ).resolves.toBeUndefined();
    const rows = await app.sql`select error_id, message from client_errors where error_id = 'sdk-1'`;
    expect(rows).toEqual([{ error_id: 'sdk-1', message: 'boom' }]);
  });

  test('captcha configuration falls back to the platform', async () => {
    const config = await client.publicCaptchaConfigGet({ path: { hostname: 'nobody.example' } });
    expect(config).toMatchObject({ enabled: false, site_key: null, protected_actions: [] });
  });

  test('reseller branding by host', async () => {
    const reseller = await createReseller(
      app.sql,
      {
        name: 'Acme Hosting',
        hostname: 'panel.acme.example',
        brand_color: '#1a2b3c',
        custom_plan_selector_enabled: false,
        og_image_mode: 'platform',
        discord_invite_url: null,
        icon_asset_id: null,
        og_image_asset_id: null,
      },
      app.clock.now(),
    );
    await expect(
      client.publicResellerByHostGet({ path: { hostname: 'PANEL.acme.example' } }),
    ).resolves.toMatchObject({
      id: reseller.id,
      name: 'Acme Hosting',
      resolved_og_image_asset_id: null,
    });
  });

  test('a 404 is an SvcApiError with code not-found and the response X-Request-Id', async () => {
    const err = await apiError(client.publicResellerByHostGet({ path: { hostname: 'unknown.example' } }));
    expect(err).toBeInstanceOf(SvcApiError);
    expect(err).toMatchObject({
      status: 404,
      code: 'not-found',
      title: 'Not found',
      detail: 'No reseller is served on this hostname.',
      errors: [],
      retryAfter: null,
      operationId: 'publicResellerByHostGet',
    });
    expect(err.requestId).toMatch(/\S/);
    expect(err.requestId).toBe(seenRequestIds.at(-1));
    expect(err.message).toBe(
      `No reseller is served on this hostname. (HTTP 404 not-found, request id ${err.requestId})`,
    );
  });

  test('a 400 carries the validation issues', async () => {
    const err = await apiError(client.publicAssetGet({ path: { id: 'not-a-uuid' } }));
    expect(err).toMatchObject({ status: 400, code: 'invalid-request' });
    expect(err.errors).toContainEqual(expect.objectContaining({ location: 'path', pointer: 'id' }));
  });

  test('an unknown body field, sent through the loose entry point, is refused with its pointer', async () => {
    const operationId: string = 'publicClientErrorsCreate';
    const err = await apiError(
      client.request(operationId, { body: { error_id: 'e', message: 'm', severity: 'high' } }),
    );
    expect(err).toMatchObject({ status: 400, code: 'invalid-request' });
    expect(err.errors).toContainEqual(expect.objectContaining({ location: 'body' }));
    expect(err.problem).toMatchObject({ request_id: err.requestId, status: 400 });
  });

  test('an asset downloads as bytes with its content type', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 255]);
    const asset = await createAsset(
      app.sql,
      { kind: 'catalog_icon', contentType: 'image/png', bytes: png },
      app.clock.now(),
    );
    const { bytes, contentType } = await client.publicAssetGet({ path: { id: asset.id } });
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(bytes).equals(png)).toBe(true);
    expect(contentType).toBe('image/png');
  });

  test('an owner-scoped asset is a 403 forbidden, and an absent one a 404', async () => {
    const asset = await createAsset(
      app.sql,
      { kind: 'support_attachment', contentType: 'application/pdf', bytes: Buffer.from('%PDF') },
      app.clock.now(),
    );
    await expect(apiError(client.publicAssetGet({ path: { id: asset.id } }))).resolves.toMatchObject({
      status: 403,
      code: 'forbidden',
    });
    await expect(
      apiError(client.publicAssetGet({ path: { id: '00000000-0000-4000-8000-000000000000' } })),
    ).resolves.toMatchObject({ status: 404, code: 'not-found' });
  });
});
