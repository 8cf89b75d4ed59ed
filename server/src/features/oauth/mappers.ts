import type { components } from '../../../../generated/api.js';
import type { OAuthProviderConfig } from '../../config.js';
import type { LinkRow } from './store.js';

type Schemas = components['schemas'];

export const toProvider = (p: OAuthProviderConfig): Schemas['OAuthProvider'] => ({
  id: p.id,
  display_name: p.displayName,
});

export const toLinkedAccount = (l: LinkRow): Schemas['OAuthLinkedAccount'] => ({
  provider_id: l.provider_id,
  has_avatar: l.picture_asset_id !== null,
  email: l.email,
  last_used_at: l.last_used_at?.toISOString() ?? null,
});
