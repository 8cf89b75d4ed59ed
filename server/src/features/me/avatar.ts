// The caller's avatar (seed document 1, "Identity"): an upload, its removal, or a linked provider's
// picture. Every avatar is a new asset; the one it replaces is deleted in the same transaction.
import { ApiError, rateLimited, unprocessable } from '../../http/errors.js';
import type { AreaHandlers, RequestContext } from '../../http/handler.js';
import { normalizeImage } from '../../images/normalize.js';
import { hit, type Limit } from '../../ratelimit/limiter.js';
import { createAsset, deleteAsset } from '../public/store.js';
import { toMe } from './mappers.js';
import * as store from './store.js';

/**
 * The seeds fix no number ("Numeric rate limits of avatar and icon uploads: not shown"). Per caller,
 * so it never scales with SOURCE_RATE_LIMIT_SCALE; every attempt counts, refused ones included, since
 * decoding is the expensive part.
 */
const UPLOADS_PER_USER: Limit = { name: 'avatar-upload:user', max: 10, windowSeconds: 10 * 60 };
const AVATAR_SIZE = 512;
const AVATAR_KIND = 'avatar';
/** avatar_source of an upload: no provider sync replaces it (migration 0005). */
const UPLOADED = 'uploaded';

export const avatarHandlers: AreaHandlers<'meAvatarUpload' | 'meAvatarDelete' | 'meAvatarSourceSet'> = {
  async meAvatarUpload({ body, auth, ctx }) {
    const limit = await hit(ctx.sql, UPLOADS_PER_USER, auth.userId, ctx.clock.now());
    if (!limit.allowed) throw rateLimited(limit.retryAfterSeconds);
    const image = await normalizeImage(body.file.bytes, {
      size: AVATAR_SIZE,
      log: ctx.log,
      requestId: ctx.requestId,
    });
    return { status: 200, body: toMe(await replaceAvatar(ctx, auth.userId, image.bytes, UPLOADED), auth) };
  },

  async meAvatarDelete({ auth, ctx }) {
    await ctx.sql.begin(async (tx) => {
      const { previous } = await store.setAvatar(tx, auth.userId, null, null, ctx.clock.now());
      if (previous) await deleteAsset(tx, previous, AVATAR_KIND);
    });
    return { status: 204 };
  },

  async meAvatarSourceSet({ body, auth, ctx }) {
    const unavailable = () =>
      unprocessable(
        'avatar-source-unavailable',
        `No linked "${body.provider_id}" account holds a usable picture.`,
      );
    const picture = await store.findProviderPicture(ctx.sql, auth.userId, body.provider_id);
    if (!picture) throw unavailable();
    // The provider's bytes are as untrusted as an upload; a picture that cannot be used is unavailable.
    const image = await normalizeImage(picture.bytes, {
      size: AVATAR_SIZE,
      log: ctx.log,
      requestId: ctx.requestId,
    }).catch((err: unknown) => {
      throw err instanceof ApiError && err.status < 500 ? unavailable() : err;
    });
    // The provider's id as the source: chosen explicitly, it overwrites an uploaded avatar too.
    return { status: 200, body: toMe(await replaceAvatar(ctx, auth.userId, image.bytes, body.provider_id), auth) };
  },
};

/** Stores `webp` as a new avatar asset, points the caller at it and deletes the one it replaces. */
function replaceAvatar(
  ctx: RequestContext,
  userId: string,
  webp: Buffer,
  source: string,
): Promise<store.MeRow> {
  const now = ctx.clock.now();
  return ctx.sql.begin(async (tx) => {
    const asset = await createAsset(tx, { kind: AVATAR_KIND, contentType: 'image/webp', bytes: webp }, now);
    const { me, previous } = await store.setAvatar(tx, userId, asset.id, source, now);
    if (previous) await deleteAsset(tx, previous, AVATAR_KIND);
    return me;
  });
}
