import type { components } from '../../../../generated/api.js';
import type { UserAuth } from '../../http/handler.js';
import type { MeRow } from './store.js';

type Schemas = components['schemas'];

/** Staff power never shows through (or flows through) an API token or an application acting as the user. */
export const toMe = (u: MeRow, auth: Pick<UserAuth, 'kind'>): Schemas['Me'] => ({
  id: u.id,
  created_at: u.created_at.toISOString(),
  name: u.name,
  language: u.language,
  is_onboarded: u.is_onboarded,
  chat_notifications_enabled: u.chat_notifications_enabled,
  system_permissions: auth.kind === 'session' ? (u.system_permissions as Schemas['SystemPermission'][]) : [],
  avatar_asset_id: u.avatar_asset_id,
  billing_country_code: u.billing_country_code,
  email: u.email,
});
