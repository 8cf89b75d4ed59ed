// All SQL of operations and the service lease (SUBSTRATE.md "Durable operations").
import type { Db } from '../db/client.js';

export type OperationKind =
  'provision' | 'reinstall' | 'backup' | 'restore' | 'deployment' | 'import' | 'start' | 'stop' | 'restart';
export type OperationStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface OperationRow {
  id: string;
  service_instance_id: string;
  resource_id: string | null;
  kind: OperationKind;
  status: OperationStatus;
  phase: string | null;
  progress_percent: number | null;
  error: string | null;
  input: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

const COLUMNS = `o.id, o.service_instance_id, o.resource_id, o.kind, o.status, o.phase, o.progress_percent, o.error,
  o.input, o.created_at, o.updated_at, o.started_at, o.completed_at`;

export async function insertOperation(
  db: Db,
  op: {
    id: string;
    serviceId: string;
    resourceId: string | null;
    kind: OperationKind;
    input: Record<string, unknown>;
    createdBy: string | null;
  },
  now: Date,
): Promise<OperationRow> {
  const [row] = await db<OperationRow[]>`
    insert into service_operations as o (id, service_instance_id, resource_id, kind, status, input, created_by,
                                         created_at, updated_at)
    values (${op.id}, ${op.serviceId}, ${op.resourceId}, ${op.kind}, 'queued', ${db.json(op.input as never)},
            ${op.createdBy}, ${now}, ${now})
    returning ${db.unsafe(COLUMNS)}`;
  return row!;
}

/** The operation holding the service, if any. */
export async function leaseHolder(db: Db, serviceId: string): Promise<OperationRow | undefined> {
  const [row] = await db<OperationRow[]>`
    select ${db.unsafe(COLUMNS)} from service_leases l join service_operations o on o.id = l.operation_id
    where l.service_instance_id = ${serviceId}`;
  return row;
}

export async function holdsLease(db: Db, operationId: string): Promise<boolean> {
  const rows = await db`select 1 from service_leases where operation_id = ${operationId}`;
  return rows.length > 0;
}

/** Takes the lease for the operation; false when another holds it (the primary key decides). */
export async function takeLease(db: Db, serviceId: string, operationId: string, now: Date): Promise<boolean> {
  const rows = await db`
    insert into service_leases (service_instance_id, operation_id, acquired_at)
    values (${serviceId}, ${operationId}, ${now})
    on conflict (service_instance_id) do nothing
    returning 1`;
  return rows.length > 0;
}

export async function releaseLease(db: Db, operationId: string): Promise<void> {
  await db`delete from service_leases where operation_id = ${operationId}`;
}

/** Queued operations without the lease (waiting behind its holder), oldest first. */
export async function waitingOperations(db: Db, serviceId: string): Promise<OperationRow[]> {
  return db<OperationRow[]>`
    select ${db.unsafe(COLUMNS)} from service_operations o
    where o.service_instance_id = ${serviceId} and o.status = 'queued'
      and not exists (select 1 from service_leases l where l.operation_id = o.id)
    order by o.created_at, o.id`;
}

/** Records the phase the job is about to act in; committed before it acts, so a restart resumes there. */
export async function recordPhase(
  db: Db,
  operationId: string,
  phase: string,
  progress: number,
  now: Date,
): Promise<void> {
  await db`
    update service_operations
    set status = 'running', phase = ${phase}, progress_percent = ${progress},
        started_at = coalesce(started_at, ${now}), updated_at = ${now}
    where id = ${operationId} and status in ('queued', 'running')`;
}

export async function markFinished(
  db: Db,
  operationId: string,
  outcome: { status: 'succeeded' | 'failed' | 'cancelled'; error: string | null },
  now: Date,
): Promise<boolean> {
  // Only an operation still under way ends: a duplicate run of its job never rewrites the outcome.
  const rows = await db`
    update service_operations
    set status = ${outcome.status}, error = ${outcome.error === null ? null : outcome.error.slice(0, 2000)},
        progress_percent = case when ${outcome.status} = 'succeeded' then 100 else progress_percent end,
        updated_at = ${now}, completed_at = ${now}
    where id = ${operationId} and status in ('queued', 'running')
    returning 1`;
  return rows.length > 0;
}
