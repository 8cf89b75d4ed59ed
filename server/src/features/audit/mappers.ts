// Row → AuditEntry, as an allow-list: a new column never reaches a response by accident.
import type { components } from '../../../../generated/api.js';
import type { AuditRow } from './store.js';

type Schemas = components['schemas'];

export const toAuditEntry = (r: AuditRow): Schemas['AuditEntry'] => ({
  id: r.id,
  action: r.action,
  actor: {
    user_id: r.actor_user_id,
    token_id: r.actor_token_id,
    application_id: r.actor_application_id,
    acting_as_user_id: r.acting_as_user_id,
  },
  target: { type: r.target_type, id: r.target_id },
  project_id: r.project_id,
  service_instance_id: r.service_instance_id,
  request_id: r.request_id,
  created_at: r.created_at.toISOString(),
});
