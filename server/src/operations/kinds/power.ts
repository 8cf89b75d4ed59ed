// Power actions (DECISIONS.md §6 "Power"): start, stop and restart every unit of a service. A stop tells
// each unit why it goes (its contract's `draining: stop`) and then stops it, which ends the workload's
// program with its agent; a start hands each unit a contract that no longer drains, starts it and waits
// for its agent to acknowledge that contract. The resource statuses follow each step, and the service's
// status and remembered power state change when the operation succeeds.
import type { Db } from '../../db/client.js';
import type { TaskContext } from '../../jobs/context.js';
import { awaitAcknowledgement, writeContract, type ContractSubject } from '../contract.js';
import { specOf } from '../converge.js';
import type { OperationDefinition, Phase } from '../run.js';
import type { OperationRow } from '../store.js';
import { withGameEnv } from '../../games/unit-env.js';

export interface PowerState {
  service: { id: string; slug: string };
  productKind: string;
  /** The catalog's workload_program (what a workload runs; null for a VPS). */
  workloadProgram: string | null;
  /** The product's plan: what its units may use. */
  plan: { cpu: number; memory_mb: number };
  units: (ContractSubject['unit'] & {
    kind: 'virtual_machine' | 'workload' | 'volume';
    volume_id: string | null;
    status: string;
    address: string | null;
  })[];
}

export async function loadPowerState(ctx: TaskContext, op: OperationRow): Promise<PowerState> {
  const [service] = await ctx.sql<
    {
      id: string;
      slug: string;
      product_kind: string;
      workload_program: string | null;
      cpu: number;
      memory_mb: number;
    }[]
  >`
    select s.id, s.slug, cp.kind as product_kind, cp.workload_program, cp.cpu, cp.memory_mb
    from service_instances s join catalog_products cp on cp.id = s.product_id
    where s.id = ${op.service_instance_id}`;
  if (!service) throw new Error(`operation ${op.id}: its service is gone`);
  const units = await ctx.sql<PowerState['units']>`
    select id, kind, volume_id, status, unit_key, public_endpoints, host(address) as address from service_resources
    where service_instance_id = ${service.id} and deleted_at is null and kind in ('virtual_machine', 'workload')
    order by created_at, id`;
  return {
    service: { id: service.id, slug: service.slug },
    productKind: service.product_kind,
    workloadProgram: service.workload_program,
    plan: { cpu: service.cpu, memory_mb: service.memory_mb },
    units,
  };
}

const subjectOf = (s: PowerState, unit: PowerState['units'][number]): ContractSubject => ({
  unit,
  service: s.service,
  productKind: s.productKind,
});

async function setStatus(ctx: TaskContext, unitId: string, status: 'running' | 'stopped'): Promise<void> {
  await ctx.sql`
    update service_resources set status = ${status}, updated_at = ${ctx.clock.now()}
    where id = ${unitId} and status <> ${status}`;
}

/** Every unit told it drains, then stopped (its workload's program with it). */
export async function stopUnits(s: PowerState, ctx: TaskContext): Promise<void> {
  for (const unit of s.units) {
    if ((await ctx.substrate.unitState(unit.id)) === 'running') {
      await writeContract(ctx, subjectOf(s, unit), 'stop');
    }
    await ctx.substrate.stopUnit(unit.id);
    await setStatus(ctx, unit.id, 'stopped');
  }
}

/** Every unit handed a contract that does not drain, started, and its acknowledgement awaited. */
export async function startUnits(s: PowerState, ctx: TaskContext): Promise<void> {
  for (const unit of s.units) {
    const generation = await writeContract(ctx, subjectOf(s, unit), false);
    await ctx.substrate.startUnit(await withGameEnv(ctx, s.service.id, specOf(unit, s.workloadProgram, s.plan)));
    await awaitAcknowledgement(ctx, unit.id, generation);
    await setStatus(ctx, unit.id, 'running');
  }
}

const STOP: Phase<PowerState> = { name: 'stop', progress: 10, run: stopUnits };
const START: Phase<PowerState> = { name: 'start', progress: 50, run: startUnits };

/** The service's status after it: unless staff suspended or ended it meanwhile (then converge acts). */
async function settle(tx: Db, s: PowerState, power: 'on' | 'off', now: Date): Promise<void> {
  await tx`
    update service_instances
    set power = ${power},
        status = case when status in ('running', 'stopped') then ${power === 'on' ? 'running' : 'stopped'} else status end,
        updated_at = ${now}
    where id = ${s.service.id}`;
}

// A failure leaves the status to the converge that finishing an operation enqueues: the units go back
// to what the service's remembered power state asks, and the resources say what they then do.
const noFailureWrites = async () => {};

export const start: OperationDefinition<PowerState> = {
  load: loadPowerState,
  phases: [{ ...START, progress: 10 }],
  complete: (tx, s, now) => settle(tx, s, 'on', now),
  fail: noFailureWrites,
};

export const stop: OperationDefinition<PowerState> = {
  load: loadPowerState,
  phases: [STOP],
  complete: (tx, s, now) => settle(tx, s, 'off', now),
  fail: noFailureWrites,
};

export const restart: OperationDefinition<PowerState> = {
  load: loadPowerState,
  phases: [STOP, START],
  complete: (tx, s, now) => settle(tx, s, 'on', now),
  fail: noFailureWrites,
};
