// What an operation on a service acts on, read fresh on every run of its job.
import type { TaskContext } from '../../jobs/context.js';
import type { ResourceRow } from '../../features/services/store.js';
import type { UnitSpec } from '../../substrate/driver.js';
import { workloadCommand } from '../../workloads/command.js';
import type { OperationRow } from '../store.js';

export interface ServiceSubject {
  service: { id: string; slug: string; status: string; subscription_status: string };
  productKind: string;
  /** The catalog's workload_program of the product (null: none, as for a VPS). */
  workloadProgram: string | null;
  /** The product's plan: what its units may use. */
  plan: { cpu: number; memory_mb: number };
  /** The machine or workload (the primary resource the operation names). */
  unit: ResourceRow;
  /** The volume it runs on. */
  volume: ResourceRow;
}

export async function loadSubject(ctx: TaskContext, op: OperationRow): Promise<ServiceSubject> {
  const [service] = await ctx.sql<
    (ServiceSubject['service'] & {
      product_kind: string;
      workload_program: string | null;
      cpu: number;
      memory_mb: number;
    })[]
  >`
    select s.id, s.slug, s.status, sub.status as subscription_status, cp.kind as product_kind,
           cp.workload_program, cp.cpu, cp.memory_mb
    from service_instances s
    join subscriptions sub on sub.id = s.subscription_id
    join catalog_products cp on cp.id = s.product_id
    where s.id = ${op.service_instance_id}`;
  if (!service) throw new Error(`operation ${op.id}: its service is gone`);
  const resources = await ctx.sql<ResourceRow[]>`
    select id, service_instance_id, kind, role, status, hidden, os_image, volume_id, size_gb, unit_key,
           public_endpoints, signal_generation, observed_generation, created_at, host(address) as address
    from service_resources where service_instance_id = ${op.service_instance_id} and deleted_at is null`;
  const unit = resources.find((r) => r.id === op.resource_id);
  const volume = resources.find((r) => r.id === unit?.volume_id);
  if (!unit || !volume) throw new Error(`operation ${op.id}: its resource or volume is gone`);
  const { product_kind: productKind, workload_program: workloadProgram, cpu, memory_mb, ...rest } = service;
  return { service: rest, productKind, workloadProgram, plan: { cpu, memory_mb }, unit, volume };
}

export function unitSpecOf(subject: ServiceSubject): UnitSpec {
  const machine = subject.unit.kind === 'virtual_machine';
  return {
    id: subject.unit.id,
    kind: machine ? 'machine' : 'workload',
    volumeId: subject.volume.id,
    command: machine ? null : workloadCommand(subject.workloadProgram),
    program: machine ? null : (subject.workloadProgram ?? null),
    address: subject.unit.address,
    limits: { cpu: subject.plan.cpu, memoryMb: subject.plan.memory_mb },
  };
}
