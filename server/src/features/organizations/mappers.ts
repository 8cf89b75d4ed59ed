// Row → API shape, as allow-lists: a new column never reaches a response by accident.
import type { components } from '../../../../generated/api.js';
import type { OrganizationRow } from '../../authz/organization-access.js';
import type { Role } from '../../authz/roles.js';

type Schemas = components['schemas'];

/** An organization as the caller sees it: `role` is the caller's own role in it. */
export const toOrganization = (o: OrganizationRow, role: Role): Schemas['Organization'] => ({
  id: o.id,
  name: o.name,
  slug: o.slug,
  created_at: o.created_at.toISOString(),
  billing_country_code: o.billing_country_code,
  icon_asset_id: o.icon_asset_id,
  role,
  personal: o.personal_owner_id !== null,
});
