// The unauthenticated public reads of document 1, driven through the SDK against the real stack.
import { createClient, SvcApiError } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as store from '../../server/src/features/public/store.js';
import { startTestApp, type TestApp } from '../support/app.js';

let app: TestApp;
let client: ReturnType<typeof createClient>;
const HOUR = 3600_000;

beforeAll(async () => {
  app = await startTestApp({ env: { CAPABILITIES: 'mail,web_push' } });
  client = createClient({ baseUrl: app.baseUrl, retries: 0 });
});
afterAll(() => app.close());

async function refusal(p: Promise<unknown>): Promise<SvcApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SvcApiError);
  return err as SvcApiError;
}

describe('GET /public/capabilities', () => {
  it('reports configured capabilities on and every other one off', async () => {
    const caps = await client.publicCapabilitiesGet();
    expect(caps).toEqual({
      container_registry: false,
      domain_connect: false,
      mail: true,
      card_checkout: false,
      crypto_checkout: false,
      object_storage_buckets: false,
      wallet_checkout: false,
      unit_log_store: false,
      unit_metrics_store: false,
      edge_protection: false,
      web_push: true,
    });
  });
});

describe('GET /public/incidents', () => {
  it('lists ongoing incidents oldest first, leaving out resolved and not yet started ones', async () => {
    const now = app.clock.now();
    const newer = await store.createIncident(app.sql, { title: 'API errors', startedAt: new Date(now.getTime() - HOUR) }, now);
    const older = await store.createIncident(
      app.sql,
      { title: 'Slow consoles', message: 'Investigating', startedAt: new Date(now.getTime() - 5 * HOUR) },
      now,
    );
    const resolved = await store.createIncident(app.sql, { title: 'Gone', startedAt: new Date(now.getTime() - 9 * HOUR) }, now);
    await store.resolveIncident(app.sql, resolved.id, now);
    await store.createIncident(app.sql, { title: 'Future', startedAt: new Date(now.getTime() + HOUR) }, now);

    const list = await client.publicIncidentsList();
    expect(list.map((i) => i.id)).toEqual([older.id, newer.id]);
    expect(list[0]).toEqual({
      id: older.id,
      title: 'Slow consoles',
      message: 'Investigating',
      started_at: new Date(now.getTime() - 5 * HOUR).toISOString(),
    });
    expect(list[1]!.message).toBeNull();
  });
});

describe('GET /public/maintenances', () => {
  it('lists windows not cancelled and scheduled no earlier than 24 hours ago, soonest first', async () => {
    const now = app.clock.now();
    const at = (h: number) => new Date(now.getTime() + h * HOUR);
    const later = await store.createMaintenance(app.sql, { title: 'DB upgrade', scheduledAt: at(48), expectedDurationMinutes: 30 }, now);
    const recent = await store.createMaintenance(app.sql, { title: 'Network', scheduledAt: at(-23) }, now);
    await store.createMaintenance(app.sql, { title: 'Too old', scheduledAt: at(-25) }, now);
    const cancelled = await store.createMaintenance(app.sql, { title: 'Cancelled', scheduledAt: at(2) }, now);
    await store.cancelMaintenance(app.sql, cancelled.id, now);

    const list = await client.publicMaintenancesList();
    expect(list.map((m) => m.title)).toEqual(['Network', 'DB upgrade']);
    expect(list[1]).toEqual({
      id: later.id,
      title: 'DB upgrade',
      scheduled_at: at(48).toISOString(),
      expected_duration_minutes: 30,
    });
    expect(list[0]!.id).toBe(recent.id);
    expect(list[0]!.expected_duration_minutes).toBeNull();
  });

  it('follows the clock: a window drops off 24 hours after it was scheduled', async () => {
    const now = app.clock.now();
    const m = await store.createMaintenance(app.sql, { title: 'Edge', scheduledAt: new Date(now.getTime() - 23.5 * HOUR) }, now);
    expect((await client.publicMaintenancesList()).some((x) => x.id === m.id)).toBe(true);
    app.clock.advance(HOUR);
    try {
      expect((await client.publicMaintenancesList()).some((x) => x.id === m.id)).toBe(false);
    } finally {
      app.clock.advance(-HOUR);
    }
  });
});

describe('GET /public/captcha/config/{hostname}', () => {
  it('answers the platform default for any host when nothing is configured, never 404', async () => {
    expect(await client.publicCaptchaConfigGet({ path: { hostname: 'nothing-here.example' } })).toEqual({
      enabled: false,
      provider: 'none',
      protected_actions: [],
      site_key: null,
    });
  });

  it("serves a host's own config on the platform's floor, falls back to the platform's, and never carries the secret", async () => {
    const now = app.clock.now();
    await store.upsertCaptchaConfig(
      app.sql,
      {
        hostname: null,
        provider: 'turnstile',
        site_key: 'platform-site-key',
        secret_sealed: await app.box.seal('captcha-secret', 'platform-secret-value'),
        verify_url: 'http://127.0.0.1:9/verify',
        enabled: true,
        protected_actions: ['login', 'signup'],
      },
      now,
    );
    await store.upsertCaptchaConfig(
      app.sql,
      {
        hostname: 'brand.example',
        provider: 'hcaptcha',
        site_key: 'brand-site-key',
        secret_sealed: await app.box.seal('captcha-secret', 'brand-secret-value'),
        verify_url: 'http://127.0.0.1:9/verify',
        enabled: true,
        protected_actions: ['password_forgot'],
      },
      now,
    );
    await store.upsertCaptchaConfig(
      app.sql,
      {
        hostname: 'keyless.example',
        provider: 'hcaptcha',
        site_key: 'keyless-site-key',
        secret_sealed: null,
        verify_url: null,
        enabled: true,
        protected_actions: ['login'],
      },
      now,
    );

    const res = await fetch(`${app.baseUrl}/api/v2/public/captcha/config/BRAND.example.`);
    const raw = await res.text();
    expect(raw).not.toContain('secret');
    expect(JSON.parse(raw)).toEqual({
      enabled: true,
      provider: 'hcaptcha',
      // The platform's actions are a floor the host's configuration adds to (DECISIONS.md §7).
      protected_actions: ['login', 'signup', 'password_forgot'],
      site_key: 'brand-site-key',
    });
    expect(await client.publicCaptchaConfigGet({ path: { hostname: 'other.example' } })).toEqual({
      enabled: true,
      provider: 'turnstile',
      protected_actions: ['login', 'signup'],
      site_key: 'platform-site-key',
    });
    // A config without its secret cannot verify anything: the platform's applies there.
    expect(await client.publicCaptchaConfigGet({ path: { hostname: 'keyless.example' } })).toEqual({
      enabled: true,
      provider: 'turnstile',
      protected_actions: ['login', 'signup'],
      site_key: 'platform-site-key',
    });
  });
});

describe('GET /public/resellers/by-host/{hostname}', () => {
  it('answers the branding of a live enabled reseller, resolving the link-preview image by mode', async () => {
    const now = app.clock.now();
    const icon = await store.createAsset(app.sql, { kind: 'reseller_icon', contentType: 'image/png', bytes: Buffer.from('icon') }, now);
    const reseller = await store.createReseller(
      app.sql,
      {
        name: 'Blockhost',
        hostname: 'play.blockhost.example',
        brand_color: '#112233',
        custom_plan_selector_enabled: true,
        og_image_mode: 'logo',
        discord_invite_url: 'https://chat.example/invite/abc',
        icon_asset_id: icon.id,
        og_image_asset_id: null,
      },
      now,
    );
    expect(await client.publicResellerByHostGet({ path: { hostname: 'Play.Blockhost.example' } })).toEqual({
      id: reseller.id,
      name: 'Blockhost',
      hostname: 'play.blockhost.example',
      brand_color: '#112233',
      custom_plan_selector_enabled: true,
      og_image_mode: 'logo',
      discord_invite_url: 'https://chat.example/invite/abc',
      icon_asset_id: icon.id,
      resolved_og_image_asset_id: icon.id,
    });
  });

  it.each([
    ['an unknown host', 'nobody.example', {}],
    ['a disabled reseller', 'disabled.example', { enabled: false }],
    ['a deleted reseller', 'deleted.example', { deleted: true }],
  ])('answers 404 not-found for %s', async (_name, hostname, state: { enabled?: boolean; deleted?: boolean }) => {
    const now = app.clock.now();
    if (hostname !== 'nobody.example') {
      const r = await store.createReseller(
        app.sql,
        {
          name: 'R',
          hostname,
          brand_color: '#000000',
          custom_plan_selector_enabled: false,
          og_image_mode: 'platform',
          discord_invite_url: null,
          icon_asset_id: null,
          og_image_asset_id: null,
          enabled: state.enabled ?? true,
        },
        now,
      );
      if (state.deleted) await store.deleteReseller(app.sql, r.id, now);
    }
    const err = await refusal(client.publicResellerByHostGet({ path: { hostname } }));
    expect(err.status).toBe(404);
    expect(err.code).toBe('not-found');
  });
});

describe('GET /public/assets/{id}', () => {
  it('streams a public asset with its type and a day of caching', async () => {
    const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const asset = await store.createAsset(app.sql, { kind: 'avatar', contentType: 'image/png', bytes }, app.clock.now());
    const res = await fetch(`${app.baseUrl}/api/v2/public/assets/${asset.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('cache-control')).toBe('public, max-age=86400');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);

    const viaSdk = await client.publicAssetGet({ path: { id: asset.id } });
    expect(viaSdk.contentType).toBe('image/png');
    expect(Buffer.from(viaSdk.bytes)).toEqual(bytes);
  });

  it('refuses owner-scoped kinds with 403 forbidden, whatever credentials are presented', async () => {
    const asset = await store.createAsset(
      app.sql,
      { kind: 'server_backup', contentType: 'application/gzip', bytes: Buffer.from('secret backup') },
      app.clock.now(),
    );
    const res = await fetch(`${app.baseUrl}/api/v2/public/assets/${asset.id}`, {
      headers: { authorization: 'Bearer anything' },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = (await res.json()) as { code: string };
    expect(body.code).toBe('forbidden');
    // A refusal is no asset: nothing may keep it.
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('answers 404 for an unknown id and 400 for a malformed one', async () => {
    const missing = await refusal(client.publicAssetGet({ path: { id: '00000000-0000-4000-8000-000000000000' } }));
    expect([missing.status, missing.code]).toEqual([404, 'not-found']);
    const bad = await refusal(client.publicAssetGet({ path: { id: 'not-a-uuid' } }));
    expect([bad.status, bad.code]).toEqual([400, 'invalid-request']);
    expect(bad.errors).toEqual([expect.objectContaining({ location: 'path', pointer: 'id' })]);
  });
});
