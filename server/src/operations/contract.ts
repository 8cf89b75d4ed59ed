// The unit contract from the platform's side (SUBSTRATE.md "The unit contract"): the UnitSignal of a
// machine or workload, written with its generation bumped on every change, and the agent's
// acknowledgement read back into PostgreSQL.
import type { UnitSignalSpec } from '../../../generated/unit-signal.js';
import type { TaskContext } from '../jobs/context.js';
import type { ResourceRow } from '../features/services/store.js';
import { OperationError } from './errors.js';

export interface ContractSubject {
  unit: Pick<ResourceRow, 'id' | 'unit_key' | 'public_endpoints'>;
  service: { id: string; slug: string };
  productKind: string;
}

/** Why a unit is being taken down (the contract's `draining`), or false while it should run. */
export type Draining = NonNullable<UnitSignalSpec['draining']>;

export function unitSignalFor(
  subject: ContractSubject,
  generation: number,
  draining: Draining = false,
): UnitSignalSpec {
  const { unit: resource, service, productKind } = subject;
  return {
    unitId: resource.id,
    key: resource.unit_key ?? 'unit',
    labels: {
      'service-instance': service.id,
      service: service.slug.slice(0, 64),
      product: productKind.replaceAll('_', '-'),
    },
    userData: null,
    allocation: null,
    draining,
    contractVersion: 1,
    generation,
    // Public endpoints belong to the service, not to what is installed: a reinstall writes them again.
    publicEndpoints: resource.public_endpoints as UnitSignalSpec['publicEndpoints'],
  };
}

/** Bumps the unit's generation, writes its contract, and answers the generation written. */
export async function writeContract(
  ctx: TaskContext,
  subject: ContractSubject,
  draining: Draining = false,
): Promise<number> {
  const [row] = await ctx.sql<{ generation: string }[]>`
    update service_resources set signal_generation = signal_generation + 1, updated_at = ${ctx.clock.now()}
    where id = ${subject.unit.id}
    returning signal_generation as generation`;
  const generation = Number(row!.generation);
  await ctx.substrate.writeUnitSignal(subject.unit.id, unitSignalFor(subject, generation, draining));
  return generation;
}

const ACK_POLL_MS = 50;

/**
 * Waits until the unit's agent acknowledges `generation` (or a later one) and records it. A contract the
 * agent refused fails the operation for good; silence past the deadline fails this run (the queue retries).
 */
export async function awaitAcknowledgement(
  ctx: TaskContext,
  unitId: string,
  generation: number,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await ctx.substrate.unitStatus(unitId);
    if (status.observedGeneration !== null && status.observedGeneration >= generation) {
      await ctx.sql`
        update service_resources set observed_generation = greatest(coalesce(observed_generation, 0), ${status.observedGeneration})
        where id = ${unitId}`;
      return;
    }
    if (status.lastError && status.lastError.generation === generation) {
      const why = status.lastError.errors.map((e) => `${e.pointer || '/'} ${e.message}`).join('; ');
      throw new OperationError(`The unit refused its contract (generation ${generation}): ${why}`, true);
    }
    if (Date.now() > deadline) throw new OperationError('The unit did not acknowledge its contract in time.');
    await new Promise((r) => setTimeout(r, ACK_POLL_MS));
  }
}
