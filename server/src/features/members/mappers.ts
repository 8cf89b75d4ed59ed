// Row → API shape, as an allow-list: a new column never reaches a response by accident.
import type { components } from '../../../../generated/api.js';
import type { MemberRow } from './store.js';

export const toMembership = (m: MemberRow): components['schemas']['Membership'] => ({
  created_at: m.created_at.toISOString(),
  name: m.name,
  organization_id: m.organization_id,
  user_id: m.user_id,
  role: m.role,
  avatar_asset_id: m.avatar_asset_id,
  email: m.email,
});
