// PUT/DELETE /organizations/{id}/icon (seed document 1, "Organizations": "same image rules as
// avatars", ManageOrganizationPolicy, rate-limited per caller), through the real stack with real images.
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { fileForm, HTML, png, pngBomb, truncatedJpeg } from '../support/images.js';
import { auditCount, auditOf, raw, signedIn as signIn, type Caller } from '../support/organizations.js';
import { outcome } from '../support/refusal.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const signedIn = (tag: string) => signIn(app, smtp, tag);
let n = 0;
const slug = () => `icon-${Date.now().toString(36)}-${(n += 1)}`;

const putIcon = (caller: Caller, id: string, bytes: Buffer, requestId?: string) =>
  raw(app, caller.token, 'PUT', `/organizations/${id}/icon`, fileForm(bytes), requestId);

const orgRow = async (id: string) => {
  const [r] = await app.sql<{ icon_asset_id: string | null; updated_at: Date }[]>`
    select icon_asset_id, updated_at from organizations where id = ${id}`;
  return r!;
};
const iconAssets = async () =>
  app.sql<{ id: string; organization_id: string | null; content_type: string }[]>`
    select id, organization_id, content_type from assets where kind = 'organization_icon' order by created_at, id`;

async function organizationWith(owner: Caller, role?: 'admin' | 'billing' | 'member') {
  const org = await owner.api.organizationCreate({ body: { name: 'Iconic', slug: slug() } });
  if (!role) return { org, member: owner };
  const member = await signedIn(role);
  await owner.api.memberAdd({ path: { id: org.id }, body: { user_id: member.userId, role } });
  return { org, member };
}

describe('PUT /organizations/{id}/icon', () => {
  it('stores a 512×512 WebP of the organization, replaces the old one in the same write, audited', async () => {
    const owner = await signedIn('icon');
    const { org, member: admin } = await organizationWith(owner, 'admin');
    const first = await putIcon(admin, org.id, await png(300, 200), 'icon-upload-1');
    expect(first.status).toBe(200);
    const one = JSON.parse(first.text) as { icon_asset_id: string; role: string };
    expect(one).toMatchObject({ id: org.id, role: 'admin', icon_asset_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const [asset] = await app.sql<{ bytes: Buffer; organization_id: string; content_type: string }[]>`
      select bytes, organization_id, content_type from assets where id = ${one.icon_asset_id}`;
    expect(asset).toMatchObject({ organization_id: org.id, content_type: 'image/webp' });
    expect(await sharp(asset!.bytes).metadata()).toMatchObject({ format: 'webp', width: 512, height: 512 });
    expect(await auditOf(app, 'icon-upload-1')).toEqual({
      organization_id: org.id,
      action: 'organization.icon_updated',
      actor_user_id: admin.userId,
      target_type: 'organization',
      target_id: org.id,
      request_id: 'icon-upload-1',
    });
    // Members read it through /assets/{id}.
    const { bytes } = await owner.api.assetGet({ path: { id: one.icon_asset_id } });
    expect(bytes.byteLength).toBeGreaterThan(0);

    const second = await putIcon(owner, org.id, await png(64, 64));
    const two = JSON.parse(second.text) as { icon_asset_id: string; role: string };
    expect(two.role).toBe('owner');
    expect(two.icon_asset_id).not.toBe(one.icon_asset_id);
    expect((await iconAssets()).filter((a) => a.organization_id === org.id).map((a) => a.id)).toEqual([two.icon_asset_id]);
    expect((await orgRow(org.id)).icon_asset_id).toBe(two.icon_asset_id);
  });

  it('refuses Billing and plain members (403), storing nothing', async () => {
    const owner = await signedIn('icon-403');
    for (const role of ['billing', 'member'] as const) {
      const { org, member } = await organizationWith(owner, role);
      const assets = (await iconAssets()).length;
      const res = await putIcon(member, org.id, await png());
      expect([res.status, JSON.parse(res.text).code]).toEqual([403, 'forbidden']);
      expect((await orgRow(org.id)).icon_asset_id).toBeNull();
      expect((await iconAssets()).length).toBe(assets);
      expect(await auditCount(app, org.id)).toBe(2); // created, member added
    }
  });

  it('answers a non-member the 404 of an unknown id before looking at the upload', async () => {
    const owner = await signedIn('icon-hidden');
    const { org } = await organizationWith(owner);
    const stranger = await signedIn('icon-prober');
    const assets = (await iconAssets()).length;
    for (const bytes of [await png(), HTML, pngBomb(), await truncatedJpeg()]) {
      const hidden = await putIcon(stranger, org.id, bytes);
      const absent = await putIcon(stranger, randomUUID(), bytes);
      expect(hidden.status).toBe(404);
      expect(hidden).toEqual(absent);
    }
    expect((await orgRow(org.id)).icon_asset_id).toBeNull();
    expect((await iconAssets()).length).toBe(assets);
    // Nothing was decoded, and the upload limit was not even consulted: a damaged image that the
    // decoder refuses (and logs) for a member left no trace for the stranger.
    const decoded = (requestId: string) =>
      app.logs.filter((l) => l.request_id === requestId && l.msg === 'image refused by the decoder');
    expect(decoded('compare-me')).toEqual([]);
    expect(await app.sql`select 1 from rate_limit_buckets where key like ${`organization-icon-upload:user:${stranger.userId}%`}`).toHaveLength(0);
    const member = await putIcon(owner, org.id, await truncatedJpeg(), 'member-damaged');
    expect([member.status, JSON.parse(member.text).code]).toEqual([400, 'invalid-field-value']);
    expect(decoded('member-damaged')).toHaveLength(1);
  });

  it('applies the avatar image rules: not an image is 415, a decompression bomb is refused before decoding', async () => {
    const owner = await signedIn('icon-rules');
    const { org } = await organizationWith(owner);
    const before = await orgRow(org.id);
    const html = await putIcon(owner, org.id, HTML);
    expect([html.status, JSON.parse(html.text).code]).toEqual([415, 'unsupported-media-type']);
    const bomb = await putIcon(owner, org.id, pngBomb());
    expect(bomb.status).toBeGreaterThanOrEqual(400);
    expect(bomb.status).toBeLessThan(500);
    expect(await orgRow(org.id)).toEqual(before);
    expect(await auditCount(app, org.id)).toBe(1);
  });

  it('allows 10 uploads per 10 minutes per caller, then 429 with Retry-After', async () => {
    const owner = await signedIn('icon-limit');
    const { org } = await organizationWith(owner);
    const image = await png(16, 16);
    // Earlier refusals in this window count too; this caller has made none.
    for (let i = 0; i < 10; i += 1) expect((await putIcon(owner, org.id, image)).status).toBe(200);
    const current = (await orgRow(org.id)).icon_asset_id;
    const res = await fetch(`${app.baseUrl}/api/v2/organizations/${org.id}/icon`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${owner.token}` },
      body: fileForm(image),
    });
    expect([res.status, ((await res.json()) as { code: string }).code]).toEqual([429, 'rate-limited']);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await orgRow(org.id)).icon_asset_id).toBe(current);
    // The avatar has a bucket of its own.
    expect(await outcome(owner.api.uploadAvatar(image, { filename: 'a.png' }))).toBe('ok');
  });
});

describe('DELETE /organizations/{id}/icon', () => {
  it('removes the icon and its asset, audited; 204 again when there is none, recording nothing', async () => {
    const owner = await signedIn('icon-delete');
    const { org, member: admin } = await organizationWith(owner, 'admin');
    const up = JSON.parse((await putIcon(owner, org.id, await png())).text) as { icon_asset_id: string };
    await admin.api.organizationIconDelete({ path: { id: org.id } });
    expect(await auditOf(app, admin.lastRequestId())).toMatchObject({
      organization_id: org.id,
      action: 'organization.icon_removed',
      actor_user_id: admin.userId,
      target_type: 'organization',
      target_id: org.id,
    });
    expect((await orgRow(org.id)).icon_asset_id).toBeNull();
    expect(await app.sql`select 1 from assets where id = ${up.icon_asset_id}`).toHaveLength(0);
    const count = await auditCount(app, org.id);
    await owner.api.organizationIconDelete({ path: { id: org.id } });
    expect(await auditCount(app, org.id)).toBe(count);
  });

  it('refuses Billing and plain members (403), keeping the icon', async () => {
    const owner = await signedIn('icon-delete-403');
    const { org, member } = await organizationWith(owner, 'member');
    const up = JSON.parse((await putIcon(owner, org.id, await png())).text) as { icon_asset_id: string };
    expect(await outcome(member.api.organizationIconDelete({ path: { id: org.id } }))).toEqual([403, 'forbidden']);
    expect((await orgRow(org.id)).icon_asset_id).toBe(up.icon_asset_id);
    expect(await app.sql`select 1 from assets where id = ${up.icon_asset_id}`).toHaveLength(1);
  });

  it('deleting the organization deletes its icon asset', async () => {
    const owner = await signedIn('icon-org-delete');
    const { org } = await organizationWith(owner);
    const up = JSON.parse((await putIcon(owner, org.id, await png())).text) as { icon_asset_id: string };
    await owner.api.organizationDelete({ path: { id: org.id } });
    expect(await app.sql`select 1 from assets where id = ${up.icon_asset_id}`).toHaveLength(0);
  });
});
