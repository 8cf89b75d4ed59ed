// Rows to the wire shapes of spec/components/schemas/services.yaml.
import type { components } from '../../../../generated/api.js';
import type { OperationView, ResourceRow, ServiceRow, ShareRow } from './store.js';
import { seenStatuses, type UnitState } from './unit-view.js';

type Schemas = components['schemas'];

export function toService(s: ServiceRow): Schemas['ServiceInstance'] {
  return {
    id: s.id,
    name: s.name,
    slug: s.slug,
    project_id: s.project_id,
    subscription_id: s.subscription_id,
    product_id: s.product_id,
    status: s.status,
    created_at: s.created_at.toISOString(),
    updated_at: s.updated_at.toISOString(),
  };
}

/**
 * The list with its primary mark (document 2 §2 "Resource list entries"): the one live resource whose
 * role is `primary` is marked; two such resources is an inconsistency the list reports, marking neither.
 */
export function toResourceList(
  rows: ResourceRow[],
  unitStates: ReadonlyMap<string, UnitState | null> = new Map(),
): Schemas['ServiceResourceList'] {
  const primaries = rows.filter((r) => r.role === 'primary');
  const inconsistent = primaries.length > 1;
  const marked = primaries.length === 1 ? primaries[0]!.id : null;
  const statuses = seenStatuses(rows, unitStates);
  return {
    resources: rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      role: r.role,
      status: statuses.get(r.id) ?? r.status,
      unit_state: unitStates.get(r.id) ?? null,
      restart_count: r.restart_count,
      last_exit_reason: r.last_exit_reason,
      last_exited_at: r.last_exited_at?.toISOString() ?? null,
      hidden: r.hidden,
      is_declared_primary: r.id === marked,
      os_image: r.os_image,
      created_at: r.created_at.toISOString(),
    })),
    primary_role_is_inconsistent: inconsistent,
  };
}

export function toShare(s: ShareRow): Schemas['ServiceShare'] {
  return {
    service_instance_id: s.service_instance_id,
    user_id: s.user_id,
    name: s.name,
    created_at: s.created_at.toISOString(),
  };
}

export function toOperation(o: OperationView): Schemas['Operation'] {
  return {
    id: o.id,
    kind: o.kind,
    service_instance_id: o.service_instance_id,
    resource_id: o.resource_id,
    status: o.status,
    phase: o.phase,
    progress_percent: o.progress_percent,
    error: o.error,
    created_at: o.created_at.toISOString(),
    updated_at: o.updated_at.toISOString(),
    completed_at: o.completed_at?.toISOString() ?? null,
  };
}
