import type { components } from '../../../../generated/api.js';
import type { SessionRow, UserRow } from './store.js';

type Schemas = components['schemas'];

export const toAuthUser = (u: UserRow): Schemas['AuthUser'] => ({
  id: u.id,
  name: u.name,
  email: u.email,
  language: u.language,
});

export const toSessionEntry = (s: SessionRow, currentSessionId: string): Schemas['SessionEntry'] => ({
  id: s.id,
  created_at: s.created_at.toISOString(),
  last_used_at: s.last_used_at.toISOString(),
  user_agent: s.user_agent,
  ip: s.ip,
  current: s.id === currentSessionId,
});

export const ACCEPTED = { accepted: true } as const;
