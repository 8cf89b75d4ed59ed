// Staff routes for resellers (DECISIONS.md §4, `manage_public_content`), end to end: what staff create,
// change, pause and enable, and the icon and OG image they upload through the image pipeline, is what
// GET /public/resellers/by-host/{hostname} and GET /public/assets/{id} answer. Every refusal is read
// back: nothing changed.
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { fileForm, png, SVG } from '../support/images.js';
import { outcome } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';
import { clientOf, contentState, staffMember, staffToken, type Staff } from './staff.js';

let app: TestApp;
let smtp: TestSmtp;
let staff: Staff;
let other: Staff;
const anonymous = () => clientOf(app);

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  staff = await staffMember(app, smtp, 'reseller-staff', ['manage_public_content']);
  other = await staffMember(app, smtp, 'reseller-other', ['manage_billing']);
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

let n = 0;
const host = (tag: string) => `${tag}-${(n += 1)}-${Date.now().toString(36)}.example`;

const branding = (hostname: string) => anonymous().publicResellerByHostGet({ path: { hostname } });
const served = async (hostname: string) => (await outcome(branding(hostname))) === 'ok';

/** The public asset's type and pixels. */
async function publicImage(id: string) {
  const res = await fetch(`${app.baseUrl}/api/v2/public/assets/${id}`);
  expect(res.status).toBe(200);
  const meta = await sharp(Buffer.from(await res.arrayBuffer())).metadata();
  return {
    contentType: res.headers.get('content-type'),
    format: meta.format,
    width: meta.width,
    height: meta.height,
  };
}

const create = (hostname: string, extra: Record<string, unknown> = {}) =>
  staff.elevated.adminResellerCreate({
    body: { name: 'Blockhost', hostname, brand_color: '#1A2B3C', ...extra },
  });

describe('resellers', () => {
  it('creates a reseller whose branding the public read answers, normalising the hostname and colour', async () => {
    const hostname = host('shop');
    const r = await create(`${hostname.toUpperCase()}.`, {
      custom_plan_selector_enabled: true,
      discord_invite_url: 'https://chat.example/invite/abc',
    });
    expect(r).toEqual({
      id: expect.any(String),
      name: 'Blockhost',
      hostname,
      brand_color: '#1a2b3c',
      custom_plan_selector_enabled: true,
      og_image_mode: 'platform',
      discord_invite_url: 'https://chat.example/invite/abc',
      icon_asset_id: null,
      og_image_asset_id: null,
      resolved_og_image_asset_id: null,
      enabled: true,
    });
    expect(await branding(hostname)).toEqual({
      id: r.id,
      name: 'Blockhost',
      hostname,
      brand_color: '#1a2b3c',
      custom_plan_selector_enabled: true,
      og_image_mode: 'platform',
      discord_invite_url: 'https://chat.example/invite/abc',
      icon_asset_id: null,
      resolved_og_image_asset_id: null,
    });
    const [event] = await app.sql<{ action: string; details: { actor_user_id: string; hostname: string } }[]>`
      select action, details from platform_events where target_id = ${r.id}`;
    expect(event).toEqual({
      action: 'reseller.created',
      details: expect.objectContaining({ actor_user_id: staff.id, hostname }),
    });
  });

  it('pauses and enables a reseller, moves it to another hostname, and changes only what is given', async () => {
    const first = host('pause');
    const r = await create(first, { enabled: false });
    expect(r.enabled).toBe(false);
    expect(await served(first)).toBe(false);
    await staff.elevated.adminResellerUpdate({ path: { id: r.id }, body: { enabled: true } });
    expect(await served(first)).toBe(true);
    await staff.elevated.adminResellerUpdate({ path: { id: r.id }, body: { enabled: false } });
    expect(await outcome(branding(first))).toEqual([404, 'not-found']);

    const second = host('moved');
    const moved = await staff.elevated.adminResellerUpdate({
      path: { id: r.id },
      body: { hostname: second, enabled: true, name: 'Renamed', discord_invite_url: null },
    });
    expect(moved).toEqual({ ...r, hostname: second, enabled: true, name: 'Renamed' });
    expect(await served(first)).toBe(false);
    expect((await branding(second)).name).toBe('Renamed');
    // Nothing given, nothing changed, nothing recorded.
    expect(await staff.elevated.adminResellerUpdate({ path: { id: r.id }, body: {} })).toEqual(moved);
    const actions = await app.sql<
      { action: string }[]
    >`select action from platform_events where target_id = ${r.id}`;
    expect(actions).toHaveLength(4);
  });

  it('refuses a hostname another reseller has with 409 hostname-taken, on create and on update', async () => {
    const taken = host('taken');
    await create(taken);
    const mine = await create(host('mine'));
    const before = await contentState(app);
    expect(await outcome(create(taken.toUpperCase(), { name: 'Copycat' }))).toEqual([409, 'hostname-taken']);
    expect(
      await outcome(
        staff.elevated.adminResellerUpdate({ path: { id: mine.id }, body: { hostname: `${taken}.` } }),
      ),
    ).toEqual([409, 'hostname-taken']);
    expect(await contentState(app)).toEqual(before);
  });

  it('stores the icon and the OG image as WebP public assets; the OG image the public read names follows the mode', async () => {
    const hostname = host('images');
    const r = await create(hostname, { og_image_mode: 'logo' });
    const withIcon = await staff.elevated.adminResellerIconUpload({
      path: { id: r.id },
      body: fileForm(await png(300, 200)) as never,
    });
    expect(withIcon.icon_asset_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await publicImage(withIcon.icon_asset_id!)).toEqual({
      contentType: 'image/webp',
      format: 'webp',
      width: 512,
      height: 512,
    });
    expect(await branding(hostname)).toMatchObject({
      icon_asset_id: withIcon.icon_asset_id,
      resolved_og_image_asset_id: withIcon.icon_asset_id,
    });

    const withOg = await staff.elevated.adminResellerOgImageUpload({
      path: { id: r.id },
      body: fileForm(await png(800, 800), 'og.png') as never,
    });
    expect(await publicImage(withOg.og_image_asset_id!)).toEqual({
      contentType: 'image/webp',
      format: 'webp',
      width: 1200,
      height: 630,
    });
    // Uploading does not change the mode.
    expect(withOg.resolved_og_image_asset_id).toBe(withIcon.icon_asset_id);
    for (const [mode, resolved] of [
      ['custom', withOg.og_image_asset_id],
      ['platform', null],
      ['disabled', null],
      ['logo', withIcon.icon_asset_id],
    ] as const) {
      const updated = await staff.elevated.adminResellerUpdate({
        path: { id: r.id },
        body: { og_image_mode: mode },
      });
      expect(updated.resolved_og_image_asset_id, mode).toBe(resolved);
      expect((await branding(hostname)).resolved_og_image_asset_id, mode).toBe(resolved);
    }

    // A new icon is a new asset; the old one is gone.
    const again = await staff.elevated.adminResellerIconUpload({
      path: { id: r.id },
      body: fileForm(await png(64, 64)) as never,
    });
    expect(again.icon_asset_id).not.toBe(withIcon.icon_asset_id);
    expect(await app.sql`select 1 from assets where id = ${withIcon.icon_asset_id!}`).toHaveLength(0);
    const kinds = await app.sql<{ kind: string }[]>`
      select kind from assets where id in ${app.sql([again.icon_asset_id!, withOg.og_image_asset_id!])} order by kind`;
    expect(kinds.map((k) => k.kind)).toEqual(['reseller_icon', 'reseller_og_image']);
  });

  it('refuses an SVG (415) and anything not an image, storing nothing', async () => {
    const r = await create(host('svg'));
    const before = await contentState(app);
    for (const upload of ['icon', 'og'] as const) {
      const call =
        upload === 'icon'
          ? staff.elevated.adminResellerIconUpload
          : staff.elevated.adminResellerOgImageUpload;
      expect(
        await outcome(
          call({ path: { id: r.id }, body: fileForm(SVG, 'logo.svg', 'image/svg+xml') as never }),
        ),
      ).toEqual([415, 'unsupported-media-type']);
      expect(
        await outcome(
          call({ path: { id: r.id }, body: fileForm(Buffer.from('just text'), 'a.png') as never }),
        ),
      ).toEqual([415, 'unsupported-media-type']);
    }
    expect(await contentState(app)).toEqual(before);
  });

  it('refuses callers, bodies and unknown resellers it must, changing nothing', async () => {
    const r = await create(host('refuse'));
    const image = await png(16, 16);
    const before = await contentState(app);
    const body = { name: 'X', hostname: host('x'), brand_color: '#000000' };
    const icon = () => fileForm(image) as never;
    const cases: [string, () => Promise<unknown>, [number, string]][] = [
      ['anonymous create', () => anonymous().adminResellerCreate({ body }), [401, 'unauthenticated']],
      ['un-elevated create', () => staff.plain.adminResellerCreate({ body }), [403, 'elevation-required']],
      [
        'create without the permission',
        () => other.elevated.adminResellerCreate({ body }),
        [403, 'forbidden'],
      ],
      [
        'anonymous update',
        () => anonymous().adminResellerUpdate({ path: { id: r.id }, body: { enabled: false } }),
        [401, 'unauthenticated'],
      ],
      [
        'un-elevated update',
        () => staff.plain.adminResellerUpdate({ path: { id: r.id }, body: { enabled: false } }),
        [403, 'elevation-required'],
      ],
      [
        'update without the permission',
        () => other.elevated.adminResellerUpdate({ path: { id: r.id }, body: { enabled: false } }),
        [403, 'forbidden'],
      ],
      [
        'anonymous icon',
        () => anonymous().adminResellerIconUpload({ path: { id: r.id }, body: icon() }),
        [401, 'unauthenticated'],
      ],
      [
        'un-elevated icon',
        () => staff.plain.adminResellerIconUpload({ path: { id: r.id }, body: icon() }),
        [403, 'elevation-required'],
      ],
      [
        'icon without the permission',
        () => other.elevated.adminResellerIconUpload({ path: { id: r.id }, body: icon() }),
        [403, 'forbidden'],
      ],
      [
        'og image without the permission',
        () => other.elevated.adminResellerOgImageUpload({ path: { id: r.id }, body: icon() }),
        [403, 'forbidden'],
      ],
      [
        'bad colour',
        () => staff.elevated.adminResellerCreate({ body: { ...body, brand_color: 'red' } }),
        [400, 'invalid-request'],
      ],
      [
        'short colour',
        () => staff.elevated.adminResellerCreate({ body: { ...body, brand_color: '#abc' } }),
        [400, 'invalid-request'],
      ],
      [
        'bad hostname',
        () => staff.elevated.adminResellerCreate({ body: { ...body, hostname: 'shop example' } }),
        [400, 'invalid-request'],
      ],
      [
        'hostname with a scheme',
        () => staff.elevated.adminResellerCreate({ body: { ...body, hostname: 'https://a.example' } }),
        [400, 'invalid-request'],
      ],
      [
        'bad mode',
        () => staff.elevated.adminResellerCreate({ body: { ...body, og_image_mode: 'banner' as never } }),
        [400, 'invalid-request'],
      ],
      [
        'plain-http invite',
        () =>
          staff.elevated.adminResellerCreate({
            body: { ...body, discord_invite_url: 'http://chat.example/x' },
          }),
        [400, 'invalid-request'],
      ],
      [
        'unknown field',
        () => staff.elevated.adminResellerCreate({ body: { ...body, paused: true } as never }),
        [400, 'invalid-request'],
      ],
      [
        'blank name',
        () => staff.elevated.adminResellerUpdate({ path: { id: r.id }, body: { name: '  ' } }),
        [400, 'invalid-field-value'],
      ],
      [
        'unknown reseller update',
        () => staff.elevated.adminResellerUpdate({ path: { id: randomUUID() }, body: { enabled: false } }),
        [404, 'not-found'],
      ],
      [
        'unknown reseller icon',
        () => staff.elevated.adminResellerIconUpload({ path: { id: randomUUID() }, body: icon() }),
        [404, 'not-found'],
      ],
      [
        'unknown reseller og image',
        () => staff.elevated.adminResellerOgImageUpload({ path: { id: randomUUID() }, body: icon() }),
        [404, 'not-found'],
      ],
    ];
    for (const [name, call, want] of cases) expect(await outcome(call()), name).toEqual(want);
    expect(await contentState(app)).toEqual(before);
    expect(await served(r.hostname)).toBe(true);
  });

  it('lets an admin-authorized API token with admin.public_content.manage manage resellers', async () => {
    const ops = await staffToken(app, staff, ['admin.public_content.manage']);
    const hostname = host('token');
    const r = await ops.adminResellerCreate({
      body: { name: 'Via token', hostname, brand_color: '#00ff00' },
    });
    await ops.adminResellerIconUpload({ path: { id: r.id }, body: fileForm(await png(32, 32)) as never });
    expect((await branding(hostname)).icon_asset_id).toMatch(/^[0-9a-f-]{36}$/);
  });
});
