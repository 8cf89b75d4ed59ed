// All SQL of service instances, their resources and shares (document 2 §2 "Resource list entries",
// §4 "Resources"; DECISIONS.md §4 "Service instances", shares).
import type { DeferredSessionCheck } from '../../authz/deferred-session.js';
import type { Db } from '../../db/client.js';
import type { Role } from '../../authz/roles.js';
import type { OperationRow } from '../../operations/store.js';

export type ServiceStatus = 'provisioning' | 'running' | 'stopped' | 'suspended' | 'ended';
export type SubscriptionStatus = 'active' | 'suspended' | 'ended';

export interface ServiceRow {
  id: string;
  name: string;
  slug: string;
  project_id: string;
  subscription_id: string;
  product_id: string;
  status: ServiceStatus;
  created_at: Date;
  updated_at: Date;
}

export interface ResourceRow {
  id: string;
  service_instance_id: string;
  kind: 'virtual_machine' | 'volume' | 'workload';
  role: 'primary' | 'storage';
  status: 'provisioning' | 'running' | 'stopped' | 'reinstalling' | 'failed' | 'unreachable';
  hidden: boolean;
  os_image: string | null;
  volume_id: string | null;
  size_gb: number | null;
  unit_key: string | null;
  public_endpoints: unknown[];
  signal_generation: string;
  observed_generation: string | null;
  created_at: Date;
  /** The unit's own address (machines and workloads), null for a volume. */
  address: string | null;
  /** Restarts after the unit stopped unasked (migration 0045), with the last one's why and when. */
  restart_count: number;
  last_exit_reason: string | null;
  last_exited_at: Date | null;
}

const SERVICE_COLUMNS =
  's.id, s.name, s.slug, s.project_id, s.subscription_id, s.product_id, s.status, s.created_at, s.updated_at';
const RESOURCE_COLUMNS = `r.id, r.service_instance_id, r.kind, r.role, r.status, r.hidden, r.os_image, r.volume_id, r.size_gb,
  r.unit_key, r.public_endpoints, r.signal_generation, r.observed_generation, r.created_at, host(r.address) as address,
  r.restart_count, r.last_exit_reason, r.last_exited_at`;

/**
 * How the caller stands towards a service: its organization, the caller's role there (null when not a
 * member) and whether the caller holds a share of it. One statement.
 */
export interface ServiceAccessRow {
  service: ServiceRow;
  organization_id: string;
  role: Role | null;
  shared: boolean;
  subscription_status: SubscriptionStatus;
  product_kind: 'vps' | 'block_game' | 'arena_game' | 'web_app';
  /**
   * With `operationId`: that operation of the service, or null (read in the same statement: a poll is one
   * query); `shared`, `subscription_status` and `product_kind` are then not read.
   */
  operation?: OperationView | null;
}

/** An operation as the poll answers it (what the job alone reads is left out). */
export type OperationView = Omit<OperationRow, 'input' | 'started_at'>;

const OPERATION_FIELDS = [
  'id',
  'service_instance_id',
  'resource_id',
  'kind',
  'status',
  'phase',
  'progress_percent',
  'error',
  'created_at',
  'updated_at',
  'completed_at',
] as const satisfies readonly (keyof OperationView)[];
const OPERATION_COLUMNS = OPERATION_FIELDS.map((f) => `o.${f} as op_${f}`).join(', ');

/** Takes the operation's `op_` columns out of a row; null when the join found none. */
function takeOperation(row: Record<string, unknown>): OperationView | null {
  const op: Record<string, unknown> = {};
  for (const f of OPERATION_FIELDS) {
    op[f] = row[`op_${f}`];
    delete row[`op_${f}`];
  }
  return op.id ? (op as unknown as OperationView) : null;
}

export async function findServiceAccess(
  db: Db,
  where: { serviceId: string } | { subscriptionId: string },
  userId: string,
  options: { lock?: boolean; operationId?: string; session?: DeferredSessionCheck } = {},
): Promise<ServiceAccessRow | undefined> {
  const condition =
    'serviceId' in where ? db`s.id = ${where.serviceId}` : db`s.subscription_id = ${where.subscriptionId}`;
  const withOperation = options.operationId !== undefined;
  const check = options.session?.pending ? options.session : undefined;
  if (check && options.lock) throw new Error('a locking read checks its session first');
  const statement = db<(ServiceRow & Omit<ServiceAccessRow, 'service' | 'operation'>)[]>`
    select ${db.unsafe(SERVICE_COLUMNS)}, p.organization_id, m.role,
    ${
      withOperation
        ? // The poll: what it needs and no more (no share holder reads operations), so it stays cheap.
          db`${db.unsafe(OPERATION_COLUMNS)}, false as shared, null as subscription_status, null as product_kind
             from service_instances s
             join projects p on p.id = s.project_id
             left join service_operations o on o.id = ${options.operationId!} and o.service_instance_id = s.id`
        : db`exists (select 1 from service_shares sh where sh.service_instance_id = s.id and sh.user_id = ${userId}) as shared,
             sub.status as subscription_status, cp.kind as product_kind
             from service_instances s
             join projects p on p.id = s.project_id
             join subscriptions sub on sub.id = s.subscription_id
             join catalog_products cp on cp.id = s.product_id`
    }
    left join organization_members m on m.organization_id = p.organization_id and m.user_id = ${userId}
    where ${condition}
    ${options.lock ? db`for update of s` : db``}`;
  let row: Awaited<typeof statement>[number] | undefined;
  if (check) {
    // One row whatever the service: the session's answer comes first, so an ended session learns nothing.
    const [both] = await db<(Awaited<typeof statement>[number] & { session_live: boolean })[]>`
      select ${check.condition(db)} as session_live, q.*
      from (select) one left join lateral (${statement}) q on true`;
    const { session_live, ...rest } = both!;
    check.settle(session_live);
    row = rest.id === null ? undefined : rest;
  } else {
    [row] = await statement;
  }
  if (!row) return undefined;
  const operation = withOperation ? takeOperation(row as unknown as Record<string, unknown>) : undefined;
  const { organization_id, role, shared, subscription_status, product_kind, ...service } = row;
  const access: ServiceAccessRow = {
    service,
    organization_id,
    role,
    shared,
    subscription_status,
    product_kind,
  };
  if (withOperation) access.operation = operation;
  if (!options.lock) return access;
  // The locking statement answered from a snapshot taken before it waited for the lock: a membership,
  // share or subscription changed meanwhile is not in it. The next statement sees it.
  const [fresh] = await db<{ role: Role | null; shared: boolean; subscription_status: SubscriptionStatus }[]>`
    select (select m.role from organization_members m
            where m.organization_id = ${organization_id} and m.user_id = ${userId}) as role,
           exists (select 1 from service_shares sh where sh.service_instance_id = ${service.id} and sh.user_id = ${userId}) as shared,
           (select status from subscriptions where id = ${service.subscription_id}) as subscription_status`;
  const [current] = await db<
    ServiceRow[]
  >`select ${db.unsafe(SERVICE_COLUMNS)} from service_instances s where s.id = ${service.id}`;
  return { ...access, ...fresh!, service: current! };
}

export async function listProjectServices(db: Db, projectId: string): Promise<ServiceRow[]> {
  return db<ServiceRow[]>`
    select ${db.unsafe(SERVICE_COLUMNS)} from service_instances s
    where s.project_id = ${projectId}
    order by s.created_at desc, s.id`;
}

/** Live resources: the primary role first, then volumes after what runs on them, then by age. */
export async function listResources(db: Db, serviceId: string): Promise<ResourceRow[]> {
  return db<ResourceRow[]>`
    select ${db.unsafe(RESOURCE_COLUMNS)} from service_resources r
    where r.service_instance_id = ${serviceId} and r.deleted_at is null
    order by (r.role = 'primary') desc, (r.kind = 'volume'), r.created_at, r.id`;
}

export async function findResource(
  db: Db,
  serviceId: string,
  resourceId: string,
): Promise<ResourceRow | undefined> {
  const [row] = await db<ResourceRow[]>`
    select ${db.unsafe(RESOURCE_COLUMNS)} from service_resources r
    where r.id = ${resourceId} and r.service_instance_id = ${serviceId} and r.deleted_at is null`;
  return row;
}

export interface ShareRow {
  service_instance_id: string;
  user_id: string;
  name: string;
  created_at: Date;
}

/** The live shares of a service, oldest first; with `userId`, that user's only. */
export async function listShares(db: Db, serviceId: string, userId?: string): Promise<ShareRow[]> {
  return db<ShareRow[]>`
    select sh.service_instance_id, sh.user_id, u.name, sh.created_at
    from service_shares sh join users u on u.id = sh.user_id
    where sh.service_instance_id = ${serviceId} and u.deleted_at is null
      ${userId === undefined ? db`` : db`and sh.user_id = ${userId}`}
    order by sh.created_at, sh.user_id`;
}

/** The share, made unless it exists; `created` says which. Null when no such (live) user. */
export async function addShare(
  db: Db,
  serviceId: string,
  userId: string,
  createdBy: string | null,
  now: Date,
): Promise<{ share: ShareRow; created: boolean } | null> {
  const inserted = await db<{ created_at: Date }[]>`
    insert into service_shares (service_instance_id, user_id, created_by, created_at)
    select ${serviceId}, u.id, ${createdBy}, ${now} from users u where u.id = ${userId} and u.deleted_at is null
    on conflict (service_instance_id, user_id) do nothing
    returning created_at`;
  const [share] = await listShares(db, serviceId, userId);
  return share ? { share, created: inserted.length > 0 } : null;
}

export async function removeShare(db: Db, serviceId: string, userId: string): Promise<boolean> {
  const rows = await db`
    delete from service_shares where service_instance_id = ${serviceId} and user_id = ${userId} returning 1`;
  return rows.length > 0;
}

/**
 * One page of the service's operations, newest first (creation time, then id: a stable order for two of
 * the same instant), and the count of them all, from one statement and so one snapshot. A page beyond the
 * end still answers the count (the count is the row the page is joined to).
 */
export async function listOperations(
  db: Db,
  serviceId: string,
  window: { limit: number; offset: number },
): Promise<{ total: number; rows: OperationView[] }> {
  const rows = await db<Record<string, unknown>[]>`
    select t.total, o.*
    from (select count(*)::int as total from service_operations where service_instance_id = ${serviceId}) t
    left join lateral (
      select ${db.unsafe(OPERATION_COLUMNS)} from service_operations o
      where o.service_instance_id = ${serviceId}
      order by o.created_at desc, o.id desc
      limit ${window.limit} offset ${window.offset}::bigint
    ) o on true
    order by o.op_created_at desc, o.op_id desc`;
  const total = (rows[0]?.total as number | undefined) ?? 0;
  return { total, rows: rows.map(takeOperation).filter((op): op is OperationView => op !== null) };
}
