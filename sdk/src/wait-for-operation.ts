// `client.waitForOperation(instanceId, operationId)`: polls a long action (provisioning, reinstall, backup, restore) until
// it ends, the way SUBSTRATE.md "Durable operations" says clients wait: `GET /service-instances/{id}/
// operations/{operation_id}`, gently backed off, reporting each change to whoever draws a progress bar.
//
// A failed or cancelled operation resolves: the server answered, and what it answered is that the action
// failed (its `error` says why). Rejections are kept for what the SDK's other calls reject with
// (SvcApiError, SvcNetworkError, SvcTimeoutError) and for the caller's own abort, so one `catch` does not
// have to tell "the reinstall failed" from "the API could not be asked".
import type { components } from './generated/api.js';
import type { LooseParams, RequestOptions } from './operation-types.js';
import { sleep } from './retry.js';

export type Operation = components['schemas']['Operation'];
export type OperationStatus = components['schemas']['OperationStatus'];

/** The statuses an operation never leaves. */
export type FinalOperationStatus = Extract<OperationStatus, 'succeeded' | 'failed' | 'cancelled'>;

/** What `waitForOperation` resolves with: the operation as it ended. */
export type FinishedOperation = Operation & { status: FinalOperationStatus };

export interface WaitForOperationOptions {
  /**
   * Called with the operation when it is first seen and whenever its `status`, `phase` or
   * `progress_percent` changed since the previous call, the final state included. A throw ends the
   * wait with that error.
   */
  onProgress?: (operation: Operation) => void;
  /**
   * Aborting it ends the wait at once, during a request or between polls, with the signal's reason;
   * the operation itself goes on. `AbortSignal.timeout(ms)` bounds the wait.
   */
  signal?: AbortSignal;
  /** The wait before the second poll, in milliseconds; each unchanged poll waits 1.5 times longer, up to `maxIntervalMs`. Default 250. */
  intervalMs?: number;
  /** The longest wait between polls, in milliseconds. Default 2 000. */
  maxIntervalMs?: number;
}

export const DEFAULT_POLL_INTERVAL_MS = 250;
export const DEFAULT_MAX_POLL_INTERVAL_MS = 2_000;
const GROWTH = 1.5;

const FINAL: ReadonlySet<string> = new Set<FinalOperationStatus>(['succeeded', 'failed', 'cancelled']);

export function isFinished(operation: Operation): operation is FinishedOperation {
  return FINAL.has(operation.status);
}

/** How one poll is sent: the client's own call, with its auth, retries (a GET is retried) and session refresh. */
export type OperationRequest = (
  operationId: string,
  params: LooseParams,
  options: RequestOptions | undefined,
) => Promise<unknown>;

export async function waitForOperation(
  request: OperationRequest,
  instanceId: string,
  operationId: string,
  options: WaitForOperationOptions = {},
): Promise<FinishedOperation> {
  const { onProgress, signal } = options;
  const first = options.intervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const most = Math.max(first, options.maxIntervalMs ?? DEFAULT_MAX_POLL_INTERVAL_MS);
  if (!(first > 0) || !Number.isFinite(most)) {
    throw new TypeError(`intervalMs and maxIntervalMs must be positive and finite, got ${first} and ${most}`);
  }
  const params = { path: { id: instanceId, operation_id: operationId } };
  let seen: string | null = null;
  let delay = first;
  for (;;) {
    signal?.throwIfAborted();
    const operation = (await request('serviceOperationGet', params, { signal })) as Operation;
    // The fields a person watches; `updated_at` alone moving is no news to them.
    const state = JSON.stringify([operation.status, operation.phase, operation.progress_percent]);
    if (state !== seen) {
      seen = state;
      onProgress?.(operation);
      // It moves: the next change is likely soon, so the wait starts short again.
      delay = first;
    } else {
      delay = Math.min(most, delay * GROWTH);
    }
    if (isFinished(operation)) return operation;
    await sleep(delay, signal);
  }
}
