// Row → MyApiTokenResponse, as an allow-list: never the secret or its digest.
import type { components } from '../../../../generated/api.js';
import type { Capability } from '../../authz/capabilities.js';
import type { ApiTokenRow } from './store.js';

type Schemas = components['schemas'];

export const toApiToken = (r: ApiTokenRow): Schemas['ApiToken'] => ({
  id: r.id,
  name: r.name,
  // Every capability the grants name, whatever their scope; none for a legacy unrestricted token.
  capabilities: [...new Set((r.grants?.grants ?? []).map((g) => g.capability))].sort(),
  authorization: r.grants ? { grants: r.grants.grants.map((g) => ({ capability: g.capability, scope: { ...g.scope } })) } : null,
  admin_authorized: r.admin_authorized,
  created_at: r.created_at.toISOString(),
  expires_at: r.expires_at?.toISOString() ?? null,
  last_used_at: r.last_used_at?.toISOString() ?? null,
});

export const toCapability = (c: Capability): Schemas['ApiTokenCapability'] => ({
  name: c.name,
  description: c.description,
  admin_only: c.systemPermission !== null,
  scopes: [...c.scopes],
});
