// Who may read an owner-only asset. The assets themselves are read and written by public/store.ts.
import type { Db } from '../../db/client.js';

/**
 * Whether the user belongs to the organization that owns an asset.
 *
 * TODO(organizations): organizations do not exist yet; the issue that adds them (and the
 * `organization_members` table) answers this with a query. Until then nobody belongs to any
 * organization, so owner-only assets answer 404 to everyone, exactly as an unknown id.
 */
export function isOrganizationMember(_db: Db, _userId: string, _organizationId: string): Promise<boolean> {
  return Promise.resolve(false);
}
