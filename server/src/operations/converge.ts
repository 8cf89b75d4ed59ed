// Making the substrate match what PostgreSQL says a service should be (not an operation: nothing holds
// the service). After staff suspend, resume or end a subscription, and every minute for every unit (the
// way a node restarts what should run after it rebooted or a unit died).
import type { TaskContext } from '../jobs/context.js';
import type { UnitSpec } from '../substrate/driver.js';

interface UnitRow {
  id: string;
  kind: 'virtual_machine' | 'workload';
  volume_id: string;
  service_status: string;
  busy: boolean;
}

const specOf = (u: UnitRow): UnitSpec => ({
  id: u.id,
  kind: u.kind === 'virtual_machine' ? 'machine' : 'workload',
  volumeId: u.volume_id,
  command: null,
});

export interface ConvergePayload {
  service_instance_id: string;
}

/** Units of a service (or of every service) with whether an operation holds their service. */
async function units(ctx: TaskContext, serviceId: string | null): Promise<UnitRow[]> {
  return ctx.sql<UnitRow[]>`
    select r.id, r.kind, r.volume_id, s.status as service_status,
           exists (select 1 from service_leases l where l.service_instance_id = s.id) as busy
    from service_resources r join service_instances s on s.id = r.service_instance_id
    where r.kind in ('virtual_machine', 'workload') and r.deleted_at is null and r.status = 'running'
      and ${serviceId === null ? ctx.sql`true` : ctx.sql`s.id = ${serviceId}`}`;
}

export async function convergeService(payload: ConvergePayload, ctx: TaskContext): Promise<void> {
  const [service] = await ctx.sql<{ status: string }[]>`
    select status from service_instances where id = ${payload.service_instance_id}`;
  if (!service) return;
  if (service.status === 'ended') {
    await endService(ctx, payload.service_instance_id);
    return;
  }
  for (const unit of await units(ctx, payload.service_instance_id)) {
    if (unit.busy) continue; // the operation holding the service decides what runs
    if (unit.service_status === 'active') await ctx.substrate.startUnit(specOf(unit));
    else await ctx.substrate.stopUnit(unit.id);
  }
}

/** An ended service: its units and volumes go, and its resources with them. */
async function endService(ctx: TaskContext, serviceId: string): Promise<void> {
  const resources = await ctx.sql<{ id: string; kind: string }[]>`
    select id, kind from service_resources where service_instance_id = ${serviceId} and deleted_at is null`;
  for (const r of resources.filter((x) => x.kind !== 'volume')) await ctx.substrate.deleteUnit(r.id);
  for (const r of resources.filter((x) => x.kind === 'volume')) await ctx.substrate.deleteVolume(r.id);
  await ctx.sql`
    update service_resources set status = 'stopped', deleted_at = ${ctx.clock.now()}, updated_at = ${ctx.clock.now()}
    where service_instance_id = ${serviceId} and deleted_at is null`;
}

/** Every unit of an active service that should run and does not, started again. */
export async function reconcileUnits(ctx: TaskContext): Promise<number> {
  let started = 0;
  for (const unit of await units(ctx, null)) {
    if (unit.busy || unit.service_status !== 'active') continue;
    const status = await ctx.substrate.unitStatus(unit.id);
    if (status.state === 'running') continue;
    await ctx.substrate.startUnit(specOf(unit));
    started += 1;
  }
  if (started > 0) ctx.log.info({ started }, 'restarted units that should run');
  return started;
}
