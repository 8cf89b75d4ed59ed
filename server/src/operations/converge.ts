// Making the substrate match what PostgreSQL says a service should be (not an operation: nothing holds
// the service). After staff suspend, resume or end a subscription, after every operation, and every
// minute for every service (the way a node restarts what should run after it rebooted or a unit died).
//
// Each service is converged in a transaction holding its row lock, and only while no operation holds
// its lease: operations start and finish under the same lock, so a converge never acts on a service an
// operation is changing (no restart between a reinstall's stop and wipe), and a status read here stays
// true until the converge is done (a suspend waits for it, then converges again).
import type { Db } from '../db/client.js';
import type { TaskContext } from '../jobs/context.js';
import type { ConvergePayload } from '../jobs/payloads.js';
import type { UnitSpec } from '../substrate/driver.js';
import { workloadCommand } from '../workloads/command.js';
import { writeContract, type Draining } from './contract.js';
import { withGameEnv } from '../games/unit-env.js';

interface ResourceRow {
  id: string;
  kind: 'virtual_machine' | 'workload' | 'volume';
  volume_id: string | null;
  status: string;
  unit_key: string | null;
  public_endpoints: unknown[];
  address: string | null;
}

/** Unit statuses a converge acts on: not one an operation is changing, nor a failed one. */
const CONVERGED = ['running', 'stopped', 'unreachable'];

export const specOf = (
  u: ResourceRow,
  workloadProgram: string | null,
  plan: { cpu: number; memory_mb: number } | null = null,
): UnitSpec => ({
  id: u.id,
  kind: u.kind === 'virtual_machine' ? 'machine' : 'workload',
  volumeId: u.volume_id!,
  command: u.kind === 'virtual_machine' ? null : workloadCommand(workloadProgram),
  program: u.kind === 'virtual_machine' ? null : (workloadProgram ?? null),
  address: u.address,
  limits: plan ? { cpu: plan.cpu, memoryMb: plan.memory_mb } : null,
});

/** Converges one service; answers how many units it started or stopped. */
export async function convergeService(payload: ConvergePayload, ctx: TaskContext): Promise<number> {
  return ctx.sql.begin(async (tx) => {
    const [service] = await tx<
      {
        id: string;
        slug: string;
        status: string;
        product_kind: string;
        workload_program: string | null;
        cpu: number;
        memory_mb: number;
        busy: boolean;
      }[]
    >`
      select s.id, s.slug, s.status, cp.kind as product_kind, cp.workload_program, cp.cpu, cp.memory_mb,
             exists (select 1 from service_leases l where l.service_instance_id = s.id) as busy
      from service_instances s join catalog_products cp on cp.id = s.product_id
      where s.id = ${payload.service_instance_id}
      for update of s`;
    // The operation holding the service decides what runs; finishing it converges again.
    if (!service || service.busy) return 0;
    const resources = await tx<ResourceRow[]>`
      select id, kind, volume_id, status, unit_key, public_endpoints, host(address) as address from service_resources
      where service_instance_id = ${payload.service_instance_id} and deleted_at is null`;
    const contract = (unit: ResourceRow, draining: Draining) =>
      writeContract(ctx, { unit, service, productKind: service.product_kind }, draining);
    if (service.status === 'ended') {
      // The contract says why the unit goes (a driver that drains honours it), then it goes.
      for (const unit of resources.filter((r) => r.kind !== 'volume')) await contract(unit, 'destroy');
      return endService(tx, ctx, payload.service_instance_id, resources);
    }
    // What the service's status asks: running units run, a stopped or suspended service's do not. A
    // unit that failed (its provisioning or reinstall) is left to the customer's next operation.
    const shouldRun = service.status === 'running';
    let changed = 0;
    for (const unit of resources.filter((r) => r.kind !== 'volume' && CONVERGED.includes(r.status))) {
      const state = await ctx.substrate.unitState(unit.id);
      if (state === 'unreachable') {
        // Its host (a cluster member) does not answer: nobody can say what it does, and starting it
        // elsewhere would run a second copy of its data. The resource says so until the host is back.
        if (unit.status !== 'unreachable') {
          ctx.log.warn(
            { resource_id: unit.id },
            'unit unreachable: the substrate host that runs it does not answer',
          );
          await tx`update service_resources set status = 'unreachable', updated_at = ${ctx.clock.now()} where id = ${unit.id}`;
        }
        continue;
      }
      if (shouldRun && state !== 'running') {
        // It was running and nobody asked it to stop: counted, with why, on the resource.
        if (unit.status === 'running') await recordUnaskedExit(tx, ctx, unit.id, state);
        if ((await ctx.substrate.readUnitSignal(unit.id))?.draining) await contract(unit, false);
        // In the transaction: it holds the service row, which the password row's key refers to.
        const spec = await withGameEnv(
          { ...ctx, sql: tx },
          service.id,
          specOf(unit, service.workload_program, service),
        );
        await ctx.substrate.startUnit(spec);
        changed += 1;
      } else if (!shouldRun && state === 'running') {
        await contract(unit, 'stop');
        await ctx.substrate.stopUnit(unit.id);
        changed += 1;
      }
      // The resource says what the unit does now.
      const status = shouldRun ? 'running' : 'stopped';
      if (unit.status !== status) {
        await tx`update service_resources set status = ${status}, updated_at = ${ctx.clock.now()} where id = ${unit.id}`;
      }
    }
    return changed;
  });
}

const EXIT_REASONS: Record<'stopped' | 'absent', string> = {
  stopped: 'Its processes ended without being asked to (its agent or program exited or was killed).',
  absent: 'The substrate no longer had the unit (its host lost it); it was made again.',
};

async function recordUnaskedExit(tx: Db, ctx: TaskContext, unitId: string, state: 'stopped' | 'absent'): Promise<void> {
  ctx.log.warn({ resource_id: unitId, state }, 'unit stopped without being asked; starting it again');
  await tx`
    update service_resources
    set restart_count = restart_count + 1, last_exit_reason = ${EXIT_REASONS[state]},
        last_exited_at = ${ctx.clock.now()}, updated_at = ${ctx.clock.now()}
    where id = ${unitId}`;
}

/**
 * An ended service: its units and volumes go, then its resources are marked deleted in the same
 * transaction (a substrate call that fails leaves them to the next converge).
 */
async function endService(
  tx: Db,
  ctx: TaskContext,
  serviceId: string,
  resources: ResourceRow[],
): Promise<number> {
  for (const r of resources.filter((x) => x.kind !== 'volume')) await ctx.substrate.deleteUnit(r.id);
  for (const r of resources.filter((x) => x.kind === 'volume')) await ctx.substrate.deleteVolume(r.id);
  // Its public ports go with it (the edge stops forwarding them when it applies the change).
  await tx`delete from port_allocations where service_instance_id = ${serviceId}`;
  await tx`
    update service_resources set status = 'stopped', deleted_at = ${ctx.clock.now()}, updated_at = ${ctx.clock.now()}
    where service_instance_id = ${serviceId} and deleted_at is null`;
  return resources.length;
}

/** Every service with live units, converged: what should run and does not starts, what should not stops. */
export async function reconcileUnits(ctx: TaskContext): Promise<number> {
  const services = await ctx.sql<{ id: string }[]>`
    select distinct r.service_instance_id as id from service_resources r
    join service_instances s on s.id = r.service_instance_id
    where r.kind in ('virtual_machine', 'workload') and r.deleted_at is null
      and r.status in ('running', 'stopped', 'unreachable')
      and s.status <> 'provisioning'`;
  let changed = 0;
  for (const { id } of services) changed += await convergeService({ service_instance_id: id }, ctx);
  if (changed > 0) ctx.log.info({ changed }, 'units started or stopped to match their services');
  return changed;
}
