// Row → API shape, as an allow-list: a new column never reaches a response by accident.
import type { components } from '../../../../generated/api.js';
import type { MemberRow } from './store.js';

/**
 * As `viewerId` sees it: a member added directly by id shows their address to themselves only, since
 * whoever added them knew an id, not an address, and an id must not reveal one (DECISIONS.md §7).
 */
export const toMembership = (m: MemberRow, viewerId: string): components['schemas']['Membership'] => ({
  created_at: m.created_at.toISOString(),
  name: m.name,
  organization_id: m.organization_id,
  user_id: m.user_id,
  role: m.role,
  avatar_asset_id: m.avatar_asset_id,
  email: m.added_by_id && m.user_id !== viewerId ? null : m.email,
});
