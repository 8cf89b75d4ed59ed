import type { components } from '../../../../generated/api.js';
import type { MeRow } from './store.js';

type Schemas = components['schemas'];

export const toMe = (u: MeRow): Schemas['Me'] => ({
  id: u.id,
  created_at: u.created_at.toISOString(),
  name: u.name,
  language: u.language,
  is_onboarded: u.is_onboarded,
  chat_notifications_enabled: u.chat_notifications_enabled,
  system_permissions: u.system_permissions as Schemas['SystemPermission'][],
  avatar_asset_id: u.avatar_asset_id,
  billing_country_code: u.billing_country_code,
  email: u.email,
});
