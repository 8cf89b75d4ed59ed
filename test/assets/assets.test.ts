// GET /assets/{id} and GET /public/assets/{id} (seed document 1, "Assets and public reads"): an
// uploaded avatar served both ways with its ETag, conditional GETs (RFC 9110 §13.1.2), and owner-only
// assets hidden exactly as unknown ids.
import { createHash, randomUUID } from 'node:crypto';
import { createClient, type SvcClient } from '@svcplatform/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { newAccount } from '../support/auth.js';
import { fileForm, png, putAvatar } from '../support/images.js';
import { startTestSmtp, type TestSmtp } from '../support/smtp.js';

let app: TestApp;
let smtp: TestSmtp;
let token: string;
let api: SvcClient;
/** The caller's uploaded avatar. */
let avatar: { id: string; bytes: Buffer; etag: string };

beforeAll(async () => {
  smtp = await startTestSmtp();
  app = await startTestApp({ env: { SMTP_URL: smtp.url, SOURCE_RATE_LIMIT_SCALE: '1000' } });
  const { session } = await newAccount(app, smtp, 'assets');
  token = session.token;
  api = createClient({ baseUrl: app.baseUrl, token, retries: 0 });
  const res = await putAvatar(app.baseUrl, token, fileForm(await png()));
  expect(res.status).toBe(200);
  const id = ((await res.json()) as { avatar_asset_id: string }).avatar_asset_id;
  const [row] = await app.sql<
    { bytes: Buffer; etag: string }[]
  >`select bytes, etag from assets where id = ${id}`;
  avatar = { id, bytes: row!.bytes, etag: row!.etag };
});
afterAll(async () => {
  await app.close();
  await smtp.close();
});

const signedIn = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${app.baseUrl}/api/v2${path}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
const anonymous = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${app.baseUrl}/api/v2${path}`, { headers });

const SANDBOX = "default-src 'none'; sandbox";

describe('the stored ETag', () => {
  it('is the strong, quoted SHA-256 of the bytes', () => {
    expect(avatar.etag).toBe(`"${createHash('sha256').update(avatar.bytes).digest('hex')}"`);
  });
});

describe.each([
  ['GET /assets/{id}', signedIn, 'private, max-age=300'],
  ['GET /public/assets/{id}', anonymous, 'public, max-age=86400'],
] as const)('%s', (name, get, cacheControl) => {
  const path = () => `${name.includes('public') ? '/public' : ''}/assets/${avatar.id}`;

  it('streams the avatar with its type, ETag, caching and sandbox headers', async () => {
    const res = await get(path());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    expect(res.headers.get('etag')).toBe(avatar.etag);
    expect(res.headers.get('cache-control')).toBe(cacheControl);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toBe(SANDBOX);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(avatar.bytes);
  });

  it.each([
    ['the ETag', () => avatar.etag],
    ['the ETag marked weak (weak comparison)', () => `W/${avatar.etag}`],
    ['a list holding it', () => `"nope", W/"other",${avatar.etag} , "x"`],
    ['*', () => '*'],
  ])('answers 304 with ETag and Cache-Control and no body for If-None-Match: %s', async (_what, value) => {
    const res = await get(path(), { 'if-none-match': value() });
    expect(res.status).toBe(304);
    expect(res.headers.get('etag')).toBe(avatar.etag);
    expect(res.headers.get('cache-control')).toBe(cacheControl);
    expect(res.headers.get('content-type')).toBeNull();
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });

  it.each([
    ['another ETag', () => '"0000"'],
    ['a prefix of the ETag', () => avatar.etag.slice(0, 20) + '"'],
    ['an unquoted ETag (malformed: the full answer)', () => avatar.etag.slice(1, -1)],
  ])('answers 200 with the bytes for If-None-Match: %s', async (_what, value) => {
    const res = await get(path(), { 'if-none-match': value() });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(avatar.bytes);
  });
});

describe('GET /assets/{id}', () => {
  it('is read through the SDK too', async () => {
    const got = await api.assetGet({ path: { id: avatar.id } });
    expect(got.contentType).toBe('image/webp');
    expect(Buffer.from(got.bytes)).toEqual(avatar.bytes);
    expect(got.notModified).toBe(false);
    // A conditional read through the SDK: a 304 is a result, with no bytes.
    const again = await api.assetGet({ path: { id: avatar.id }, header: { 'If-None-Match': got.etag! } });
    expect(again).toMatchObject({ notModified: true, etag: got.etag });
    expect(again.bytes).toHaveLength(0);
    const pub = await createClient({ baseUrl: app.baseUrl, retries: 0 }).publicAssetGet({
      path: { id: avatar.id },
      header: { 'If-None-Match': `W/${got.etag!}` },
    });
    expect(pub.notModified).toBe(true);
  });

  it('needs a signed-in caller', async () => {
    const res = await anonymous(`/assets/${avatar.id}`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('unauthenticated');
  });

  it('answers an owner-only asset of an organization the caller is not in exactly as an unknown id (404), and /public/assets 403', async () => {
    const owned = randomUUID();
    await app.sql`
      insert into assets (id, kind, content_type, bytes, etag, organization_id, created_at)
      values (${owned}, 'support_attachment', 'text/plain', ${Buffer.from('private notes')}, '"abc"', ${randomUUID()}, now())`;
    const unknown = randomUUID();
    const hidden = await signedIn(`/assets/${owned}`, { 'x-request-id': 'same-id' });
    const absent = await signedIn(`/assets/${unknown}`, { 'x-request-id': 'same-id' });
    expect(hidden.status).toBe(404);
    const hiddenText = await hidden.text();
    expect(JSON.parse(hiddenText)).toMatchObject({ code: 'not-found', request_id: 'same-id' });
    // Byte for byte the same answer, headers included (but the date).
    expect(hiddenText).toBe(await absent.text());
    const headers = (r: Response) => [...r.headers].filter(([k]) => k !== 'date');
    expect(headers(hidden)).toEqual(headers(absent));

    // Asking for it with its ETag reveals nothing either.
    const conditional = await signedIn(`/assets/${owned}`, { 'if-none-match': '"abc"' });
    expect(conditional.status).toBe(404);

    const viaPublic = await anonymous(`/public/assets/${owned}`);
    expect(viaPublic.status).toBe(403);
    expect(((await viaPublic.json()) as { code: string }).code).toBe('forbidden');
  });

  it("serves an owner-only asset of the caller's own organization, privately cacheable", async () => {
    const { session } = await newAccount(app, smtp, 'owner-only');
    const [org] = await app.sql<{ id: string }[]>`
      select id from organizations where personal_owner_id = ${session.user.id}`;
    const owned = randomUUID();
    await app.sql`
      insert into assets (id, kind, content_type, bytes, etag, organization_id, created_at)
      values (${owned}, 'service_config', 'application/octet-stream', ${Buffer.from('config')}, '"cfg"', ${org!.id}, now())`;
    const res = await fetch(`${app.baseUrl}/api/v2/assets/${owned}`, {
      headers: { authorization: `Bearer ${session.token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, max-age=300');
    expect(Buffer.from(await res.arrayBuffer()).toString()).toBe('config');
    // Another person (this file's caller) still gets the unknown-id answer.
    expect((await signedIn(`/assets/${owned}`)).status).toBe(404);
  });

  it('answers 400 invalid-request for a malformed id', async () => {
    const res = await signedIn('/assets/not-a-uuid');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe('invalid-request');
  });
});
