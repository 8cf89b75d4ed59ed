// GET /assets/{id}: assets for a signed-in caller (seed document 1, "Assets and public reads").
import { notFound } from '../../http/errors.js';
import type { AreaHandlers } from '../../http/handler.js';
import type { Db } from '../../db/client.js';
import { PUBLIC_ASSET_KINDS } from '../public/handlers.js';
import { findAsset, type AssetRow } from '../public/store.js';
import { assetAnswer } from './serve.js';
import { isOrganizationMember } from './store.js';

/** Owner-only answers are the caller's alone and short-lived (seed: "privately cacheable"). */
const PRIVATE_CACHE = 'private, max-age=300';

export const assetHandlers: AreaHandlers<'assetGet'> = {
  async assetGet({ path, auth, ctx }) {
    const asset = await findAsset(ctx.sql, path.id);
    // An asset the caller may not read answers exactly as one that does not exist.
    if (!asset || !(await mayRead(ctx.sql, auth.userId, asset))) throw notFound('No such asset.');
    return assetAnswer(asset, ctx.header('if-none-match'), PRIVATE_CACHE);
  },
};

/**
 * Public kinds to anyone signed in; owner-only kinds (support attachments, service configurations,
 * server backups) to the members of the organization that owns them.
 */
async function mayRead(db: Db, userId: string, asset: AssetRow): Promise<boolean> {
  if (PUBLIC_ASSET_KINDS.has(asset.kind)) return true;
  if (asset.organization_id === null) return false;
  return isOrganizationMember(db, userId, asset.organization_id);
}
