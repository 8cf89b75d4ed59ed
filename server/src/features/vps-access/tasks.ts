// The VPS access area's job (registered at the composition root, server/src/tasks.ts): the machine's
// credentials made what PostgreSQL holds. Enqueued in the transaction of each change, so it runs within
// milliseconds of the commit (DECISIONS.md §8: "applied within 5 s"); it reads the newest state, so runs
// that coalesce or repeat converge on the same files.
import { enqueue } from '../../jobs/queue.js';
import type { ApplyMachineAccessPayload } from '../../jobs/payloads.js';
import type { AreaTasks } from '../../jobs/task.js';
import type { TaskContext } from '../../jobs/context.js';
import type { Db } from '../../db/client.js';
import { machineCredentials, machineOf } from './store.js';

/** While a provisioning or reinstall builds the machine, its vm_access step writes the credentials. */
const REBUILDING = new Set(['provisioning', 'reinstalling']);
const RETRY_WHILE_REBUILDING_MS = 1000;

const jobKeyOf = (resourceId: string) => `machine-access:${resourceId}`;

export function applyMachineAccessLater(tx: Db, resourceId: string, delayMs = 0): Promise<string> {
  return enqueue(
    tx,
    'apply_machine_access',
    { resource_id: resourceId },
    { jobKey: jobKeyOf(resourceId), delayMs },
  );
}

async function applyMachineAccess(payload: ApplyMachineAccessPayload, ctx: TaskContext): Promise<void> {
  const machine = await machineOf(ctx.sql, payload.resource_id);
  if (!machine) return;
  // Writing while a rebuild wipes the volume would race it; the step after the wipe writes the state
  // it reads then, and this run comes back to write whatever changed after that.
  if (REBUILDING.has(machine.status)) {
    await applyMachineAccessLater(ctx.sql, machine.id, RETRY_WHILE_REBUILDING_MS);
    return;
  }
  await ctx.substrate.setMachineAccess(
    machine.id,
    machine.volume_id,
    await machineCredentials(ctx.sql, machine.id),
  );
}

export const VPS_ACCESS_TASKS = {
  apply_machine_access: {
    run: (payload, ctx) => applyMachineAccess(payload as ApplyMachineAccessPayload, ctx),
  },
} satisfies AreaTasks;
