// A provider's picture (document 1, "Identity": avatar source; DECISIONS.md §4): fetched from the
// issuer's origin (or a public address) within a size limit, through the image pipeline; it becomes a
// new account's avatar and follows the provider while the avatar came from it, never replaces an
// uploaded (or removed) avatar, and PUT /me/avatar/source copies it on request.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SvcClient } from '@svcplatform/sdk';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_BASE_PATH } from '../../server/src/spec.js';
import { newAccount } from '../support/auth.js';
import { BLUE, png, RED } from '../support/images.js';
import { refusal } from '../support/refusal.js';
import { clientOf, counts, flow, oauthSignIn, startWorld, type World } from './harness.js';

let w: World;
/** Another server on loopback, not the issuer's origin: a picture there must never be fetched. */
let decoy: { url: string; hits: number; close(): void };

beforeAll(async () => {
  w = await startWorld();
  const server = createServer((_req, res) => {
    decoy.hits += 1;
    res.setHeader('content-type', 'image/png');
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  decoy = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/picture.png`,
    hits: 0,
    close: () => server.close(),
  };
}, 60_000);
afterAll(async () => {
  await w?.close();
  decoy?.close();
});

const solid = (colour: { r: number; g: number; b: number }) =>
  sharp({ create: { width: 64, height: 64, channels: 3, background: colour } })
    .png()
    .toBuffer();

let n = 0;
/** A provider person whose picture is `bytes`, served at the issuer's origin (a new URL each time). */
function personWithPicture(picture: string | null): string {
  const subject = `pic-${(n += 1)}-${randomUUID().slice(0, 8)}`;
  w.idp.accounts.set(subject, { email: `${subject}@idp.example.test`, email_verified: true, picture });
  return subject;
}
const pictureAt = (bytes: Buffer) => w.idp.servePicture(`${randomUUID()}.png`, bytes);

const avatarBytes = async (api: SvcClient): Promise<Buffer | null> => {
  const me = await api.meGet();
  if (!me.avatar_asset_id) return null;
  const res = await fetch(`${w.app.baseUrl}${API_BASE_PATH}/public/assets/${me.avatar_asset_id}`);
  expect(res.headers.get('content-type')).toBe('image/webp');
  return Buffer.from(await res.arrayBuffer());
};
/** The dominant colour of an avatar: which picture it came from. */
const colourOf = async (bytes: Buffer) => {
  const { dominant } = await sharp(bytes).stats();
  return dominant.r > dominant.b ? 'red' : 'blue';
};
const sourceOf = async (userId: string) =>
  (
    await w.app.sql<{ avatar_source: string | null }[]>`select avatar_source from users where id = ${userId}`
  )[0]!.avatar_source;

describe('the provider picture', () => {
  it("becomes a new account's avatar (a 512×512 WebP), and the link says it holds one", async () => {
    const subject = personWithPicture(pictureAt(await solid(RED)));
    const session = await oauthSignIn(w, subject);
    const api = clientOf(w.app, session.token);
    const bytes = await avatarBytes(api);
    expect(bytes).not.toBeNull();
    expect(await sharp(bytes!).metadata()).toMatchObject({ format: 'webp', width: 512, height: 512 });
    expect(await colourOf(bytes!)).toBe('red');
    expect(await sourceOf(session.user.id)).toBe('idp');
    expect(await api.oauthAccountList()).toMatchObject([{ provider_id: 'idp', has_avatar: true }]);
  });

  it('follows the provider while the avatar came from it; is fetched again only when the URL changes', async () => {
    const subject = personWithPicture(pictureAt(await solid(RED)));
    const session = await oauthSignIn(w, subject);
    const api = clientOf(w.app, session.token);
    const requests = w.idp.pictureRequests;
    await oauthSignIn(w, subject);
    expect(w.idp.pictureRequests).toBe(requests);
    w.idp.accounts.get(subject)!.picture = pictureAt(await solid(BLUE));
    await oauthSignIn(w, subject);
    expect(w.idp.pictureRequests).toBe(requests + 1);
    expect(await colourOf((await avatarBytes(api))!)).toBe('blue');
  });

  it('never replaces an uploaded avatar; PUT /me/avatar/source then copies the stored picture', async () => {
    const subject = personWithPicture(pictureAt(await solid(RED)));
    const session = await oauthSignIn(w, subject);
    const api = clientOf(w.app, session.token);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(await png(32, 32))], { type: 'image/png' }), 'mine.png');
    const upload = await fetch(`${w.app.baseUrl}${API_BASE_PATH}/me/avatar`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${session.token}` },
      body: form,
    });
    expect(upload.status).toBe(200);
    const uploaded = (await api.meGet()).avatar_asset_id;
    w.idp.accounts.get(subject)!.picture = pictureAt(await solid(BLUE));
    await oauthSignIn(w, subject);
    expect((await api.meGet()).avatar_asset_id).toBe(uploaded);
    expect(await sourceOf(session.user.id)).toBe('uploaded');

    const me = await api.meAvatarSourceSet({ body: { provider_id: 'idp' } });
    expect(me.avatar_asset_id).not.toBeNull();
    expect(me.avatar_asset_id).not.toBe(uploaded);
    expect(await colourOf((await avatarBytes(api))!)).toBe('blue');
    expect(await sourceOf(session.user.id)).toBe('idp');
  });

  it('is not synced back after the avatar was removed', async () => {
    const subject = personWithPicture(pictureAt(await solid(RED)));
    const session = await oauthSignIn(w, subject);
    const api = clientOf(w.app, session.token);
    await api.meAvatarDelete();
    w.idp.accounts.get(subject)!.picture = pictureAt(await solid(BLUE));
    await oauthSignIn(w, subject);
    expect((await api.meGet()).avatar_asset_id).toBeNull();
    expect(await api.oauthAccountList()).toMatchObject([{ has_avatar: true }]);
  });

  it('PUT /me/avatar/source needs the provider linked and holding a picture (422 avatar-source-unavailable)', async () => {
    const session = await oauthSignIn(w, personWithPicture(null));
    const api = clientOf(w.app, session.token);
    for (const provider of ['idp', 'spare', 'nobody']) {
      const before = await counts(w.app);
      const e = await refusal(api.meAvatarSourceSet({ body: { provider_id: provider } }));
      expect([e.status, e.code], provider).toEqual([422, 'avatar-source-unavailable']);
      expect(await counts(w.app)).toEqual(before);
    }
    expect((await api.meGet()).avatar_asset_id).toBeNull();
  });

  it('a linked identity brings its picture for PUT /me/avatar/source, without touching the avatar', async () => {
    const { session } = await newAccount(w.app, w.smtp, 'pic-linker');
    const api = clientOf(w.app, session.token);
    const subject = personWithPicture(pictureAt(await solid(BLUE)));
    await flow(w, subject, { link: api });
    expect((await api.meGet()).avatar_asset_id).toBeNull();
    expect(await api.oauthAccountList()).toMatchObject([{ provider_id: 'idp', has_avatar: true }]);
    await api.meAvatarSourceSet({ body: { provider_id: 'idp' } });
    expect(await colourOf((await avatarBytes(api))!)).toBe('blue');
    // Unlinking removes the stored picture, not the avatar made from it.
    await api.oauthAccountUnlink({ path: { provider: 'idp' } });
    expect(await avatarBytes(api)).not.toBeNull();
    const e = await refusal(api.meAvatarSourceSet({ body: { provider_id: 'idp' } }));
    expect(e.code).toBe('avatar-source-unavailable');
  });
});

describe('what is not fetched or not kept', () => {
  it('a picture on another loopback origin is never requested (only public addresses or the issuer’s own)', async () => {
    const session = await oauthSignIn(w, personWithPicture(decoy.url));
    expect(decoy.hits).toBe(0);
    const api = clientOf(w.app, session.token);
    expect((await api.meGet()).avatar_asset_id).toBeNull();
    expect(await api.oauthAccountList()).toMatchObject([{ has_avatar: false }]);
  });

  it('a picture over the size limit, or not an image, is dropped and the sign-in goes on', async () => {
    const huge = Buffer.concat([await solid(RED), Buffer.alloc(5 * 1024 * 1024 + 1)]);
    for (const bytes of [huge, Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')]) {
      const session = await oauthSignIn(w, personWithPicture(pictureAt(bytes)));
      const api = clientOf(w.app, session.token);
      expect((await api.meGet()).avatar_asset_id).toBeNull();
      expect(await api.oauthAccountList()).toMatchObject([{ has_avatar: false }]);
    }
  });
});
