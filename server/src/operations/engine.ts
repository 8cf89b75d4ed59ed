// Starting and finishing operations under the service lease (SUBSTRATE.md "Durable operations"). One
// lease per service serialises what holds the service. It is taken in the transaction that creates the
// operation, under the service row's lock, so two API processes cannot both start one; when the holder
// finishes, the transaction that records it hands the lease to the oldest operation waiting behind it.
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/client.js';
import { conflict } from '../http/errors.js';
import { enqueue } from '../jobs/queue.js';
import * as store from './store.js';
import type { OperationKind, OperationRow } from './store.js';

/** Runs of a failing operation job before it is recorded as failed (with the queue's backoff between). */
export const OPERATION_ATTEMPTS = 8;

export interface StartOperation {
  serviceId: string;
  resourceId: string | null;
  kind: OperationKind;
  input: Record<string, unknown>;
  createdBy: string | null;
  /** Kinds this operation may wait behind (queued until the holder finishes); any other holder is a 409. */
  waitsBehind?: readonly string[];
}

/**
 * Creates the operation: with the lease and its job when the service is free, queued behind the holder
 * when its kind allows, else 409 `operation-in-progress`. Call it in the request's transaction with the
 * service row locked (`for update`), so holder and waiters are read one request at a time.
 */
export async function startOperation(tx: Db, start: StartOperation, now: Date): Promise<OperationRow> {
  const holder = await store.leaseHolder(tx, start.serviceId);
  if (holder) {
    const waiting = await store.waitingOperations(tx, start.serviceId);
    const mayWait =
      (start.waitsBehind ?? []).includes(holder.kind) && !waiting.some((w) => w.kind === start.kind);
    if (!mayWait) {
      throw conflict(
        'operation-in-progress',
        `A ${holder.kind} operation (${holder.id}) holds this service; try again when it has finished.`,
      );
    }
  }
  const op = await store.insertOperation(tx, { id: randomUUID(), ...start }, now);
  if (!holder) await begin(tx, op, now);
  return op;
}

async function begin(tx: Db, op: OperationRow, now: Date): Promise<void> {
  if (!(await store.takeLease(tx, op.service_instance_id, op.id, now))) {
    // The service row's lock makes this unreachable; the primary key is the last word all the same.
    throw conflict('operation-in-progress', 'Another operation holds this service.');
  }
  await enqueue(
    tx,
    'run_operation',
    { operation_id: op.id },
    { jobKey: `operation:${op.id}`, maxAttempts: OPERATION_ATTEMPTS },
  );
}

/**
 * Records the end of an operation and hands the service to the next waiting one, in the caller's
 * transaction. Locks the service row first, as startOperation's callers do. An operation already ended
 * (a second run of its job) changes nothing.
 */
export async function finishOperation(
  tx: Db,
  op: OperationRow,
  outcome: { status: 'succeeded' | 'failed' | 'cancelled'; error: string | null },
  now: Date,
): Promise<void> {
  await tx`select 1 from service_instances where id = ${op.service_instance_id} for update`;
  if (!(await store.markFinished(tx, op.id, outcome, now))) return;
  await store.releaseLease(tx, op.id);
  const [next] = await store.waitingOperations(tx, op.service_instance_id);
  if (next) await begin(tx, next, now);
  // What changed while the operation held the service (staff suspended it meanwhile) is applied now.
  else await enqueue(tx, 'converge_service', { service_instance_id: op.service_instance_id });
}
