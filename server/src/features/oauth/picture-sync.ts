// A linked identity's picture: fetched (picture.ts) when the provider names a new one, re-encoded by
// the image pipeline, stored with the link, and copied into the account's avatar when the account
// takes its avatar from this provider. An uploaded avatar is never replaced by a sync (seed document 1,
// "Identity"); nor is a removed one (DELETE /me/avatar: "no provider re-sync").
import type { OAuthProviderConfig } from '../../config.js';
import type { RequestContext } from '../../http/handler.js';
import { normalizeImage } from '../../images/normalize.js';
import { setAvatar } from '../me/store.js';
import { createAsset, deleteAsset } from '../public/store.js';
import { fetchPicture } from './picture.js';
import * as store from './store.js';

const AVATAR_KIND = 'avatar';
const AVATAR_SIZE = 512;

/**
 * Refreshes the picture of `link` from `pictureUrl`. `newAccount`: the account was made by this
 * sign-in, so the picture becomes its avatar; otherwise the avatar follows only while it came from
 * this provider. Never throws for the picture's sake: a sign-in does not fail over an avatar.
 */
export async function syncPicture(
  ctx: RequestContext,
  provider: OAuthProviderConfig,
  link: store.LinkRow,
  pictureUrl: string | null,
  newAccount: boolean,
): Promise<void> {
  if (pictureUrl === null || (pictureUrl === link.picture_url && link.picture_asset_id !== null)) return;
  const fetched = await fetchPicture(pictureUrl, provider.issuer);
  if ('failed' in fetched) {
    ctx.log.warn(
      { request_id: ctx.requestId, provider: provider.id, reason: fetched.failed },
      'provider picture not fetched',
    );
    return;
  }
  let webp: Buffer;
  try {
    webp = (
      await normalizeImage(fetched.bytes, { size: AVATAR_SIZE, log: ctx.log, requestId: ctx.requestId })
    ).bytes;
  } catch {
    // normalizeImage logged why.
    return;
  }
  const now = ctx.clock.now();
  await ctx.sql.begin(async (tx) => {
    const account = await store.lockAccount(tx, link.user_id);
    if (!account || account.deleted_at) return;
    const current = await store.findUserLink(tx, link.user_id, provider.id);
    // Unlinked (or linked anew) meanwhile: nothing of this picture is wanted any more.
    if (current?.id !== link.id) return;
    const picture = await createAsset(tx, { kind: AVATAR_KIND, contentType: 'image/webp', bytes: webp }, now);
    await store.setLinkPicture(tx, link.id, pictureUrl, picture.id);
    if (current.picture_asset_id) await deleteAsset(tx, current.picture_asset_id, AVATAR_KIND);
    const follows = account.avatar_source === provider.id || (newAccount && account.avatar_source === null);
    if (!follows) return;
    // The avatar is an asset of its own: unlinking deletes the link's picture, not the avatar.
    const avatar = await createAsset(tx, { kind: AVATAR_KIND, contentType: 'image/webp', bytes: webp }, now);
    const { previous } = await setAvatar(tx, link.user_id, avatar.id, provider.id, now);
    if (previous) await deleteAsset(tx, previous, AVATAR_KIND);
  });
}
