// The operations area's jobs (registered at the composition root, server/src/tasks.ts).
import type { ConvergePayload, RunOperationPayload } from '../jobs/payloads.js';
import { MINUTE, periodic, type AreaTasks } from '../jobs/task.js';
import { convergeService, reconcileUnits } from './converge.js';
import { OPERATIONS } from './definitions.js';
import { runOperation } from './run.js';
import { requeueStrandedOperations } from './stranded.js';

export const OPERATION_TASKS = {
  run_operation: { run: (payload, ctx) => runOperation(OPERATIONS, payload as RunOperationPayload, ctx) },
  converge_service: {
    run: async (payload, ctx) => {
      await convergeService(payload as ConvergePayload, ctx);
    },
  },
  requeue_stranded_operations: periodic('*/5 * * * *', 5 * MINUTE, requeueStrandedOperations),
  // Units that should run and do not (a node restart, a crashed unit) are started again.
  reconcile_units: periodic('* * * * *', MINUTE, reconcileUnits),
} satisfies AreaTasks;
