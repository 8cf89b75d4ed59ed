// The job that runs an operation (task `run_operation`): its phases in order, each recorded before it
// acts, so a worker killed at any point resumes, on the queue's retry, at the phase it was in. Phases
// are idempotent (the substrate's calls converge), so acting in a phase twice is safe.
import type { TaskContext } from '../jobs/context.js';
import type { RunOperationPayload } from '../jobs/payloads.js';
import type { Db } from '../db/client.js';
import { finishOperation } from './engine.js';
import { GENERIC_FAILURE, OperationError } from './errors.js';
import { permanentFailure } from './permanent.js';
import { SubstrateUnreachableError } from '../substrate/driver.js';
import * as store from './store.js';
import type { OperationKind, OperationRow } from './store.js';

export interface Phase<S> {
  name: string;
  /** progress_percent while in this phase. */
  progress: number;
  run(state: S, ctx: TaskContext): Promise<void>;
}

export interface OperationDefinition<S> {
  /** What the phases need, read fresh on every run. */
  load(ctx: TaskContext, op: OperationRow): Promise<S>;
  /** Once, when the operation starts running (its first run): in the transaction that records it. */
  begin?(tx: Db, state: S, now: Date): Promise<void>;
  phases: readonly Phase<S>[];
  /** Right after a phase is recorded, before it acts (a restore's backup shows the phase too). */
  entered?(state: S, phase: string, ctx: TaskContext): Promise<void>;
  /**
   * How the operation ended once every phase ran: succeeded unless it says otherwise (an import that was
   * cancelled, or whose copy failed, still runs its cleaning-up phase first).
   */
  outcome?(
    state: S,
    ctx: TaskContext,
  ): Promise<{ status: 'succeeded' | 'failed' | 'cancelled'; error: string | null }>;
  /** In the transaction that records the end the phases reached (success, unless `outcome` says otherwise). */
  complete(tx: Db, state: S, now: Date): Promise<void>;
  /** In the transaction that records failure; from the operation alone (its state may not have loaded). */
  fail(tx: Db, op: OperationRow, now: Date): Promise<void>;
}

export type OperationDefinitions = { [K in OperationKind]?: OperationDefinition<never> };

export async function runOperation(
  definitions: OperationDefinitions,
  payload: RunOperationPayload,
  ctx: TaskContext,
): Promise<void> {
  const op = await loadRunnable(ctx, payload.operation_id);
  if (!op) return;
  const definition = definitions[op.kind] as OperationDefinition<unknown> | undefined;
  if (!definition) {
    await ctx.sql.begin((tx) =>
      finishOperation(
        tx,
        op,
        { status: 'failed', error: `This platform cannot run ${op.kind} operations yet.` },
        ctx.clock.now(),
      ),
    );
    return;
  }
  let state: unknown;
  try {
    state = await definition.load(ctx, op);
    if (op.status === 'queued') {
      await ctx.sql.begin(async (tx) => {
        await definition.begin?.(tx, state, ctx.clock.now());
        await store.recordPhase(
          tx,
          op.id,
          definition.phases[0]!.name,
          definition.phases[0]!.progress,
          ctx.clock.now(),
        );
      });
    }
    const from = Math.max(
      0,
      definition.phases.findIndex((p) => p.name === op.phase),
    );
    for (const phase of definition.phases.slice(from)) {
      await store.recordPhase(ctx.sql, op.id, phase.name, phase.progress, ctx.clock.now());
      await definition.entered?.(state as never, phase.name, ctx);
      await failpoint(ctx, op.kind, phase.name);
      await phase.run(state as never, ctx);
    }
    const outcome = (await definition.outcome?.(state as never, ctx)) ?? { status: 'succeeded', error: null };
    await ctx.sql.begin(async (tx) => {
      await definition.complete(tx, state as never, ctx.clock.now());
      await finishOperation(tx, op, outcome, ctx.clock.now());
    });
  } catch (err) {
    const permanentWhy = err instanceof OperationError ? null : permanentFailure(err);
    const permanent = (err instanceof OperationError && err.permanent) || permanentWhy !== null;
    const lastAttempt = ctx.job.attempts >= ctx.job.maxAttempts;
    ctx.log.warn(
      {
        operation: op.id,
        kind: op.kind,
        attempt: ctx.job.attempts,
        error: err instanceof Error ? err.message : String(err),
      },
      permanent || lastAttempt ? 'operation failed' : 'operation run failed; the queue retries it',
    );
    if (!permanent && !lastAttempt) throw err;
    const message =
      err instanceof OperationError || err instanceof SubstrateUnreachableError
        ? err.message
        : (permanentWhy ?? GENERIC_FAILURE);
    await ctx.sql.begin(async (tx) => {
      await definition.fail(tx, op, ctx.clock.now());
      await finishOperation(tx, op, { status: 'failed', error: message }, ctx.clock.now());
    });
  }
}

/** The operation if this job should run it: not finished, and holding the service's lease. */
async function loadRunnable(ctx: TaskContext, operationId: string): Promise<OperationRow | undefined> {
  const [op] = await ctx.sql<OperationRow[]>`
    select o.id, o.service_instance_id, o.resource_id, o.kind, o.status, o.phase, o.progress_percent, o.error,
           o.input, o.created_at, o.updated_at, o.started_at, o.completed_at
    from service_operations o where o.id = ${operationId}`;
  if (!op || (op.status !== 'queued' && op.status !== 'running')) return undefined;
  if (!(await store.holdsLease(ctx.sql, op.id))) return undefined;
  return op;
}

/**
 * FAILPOINT_HOLD=kind:phase (tests only) parks the job in that phase, after it is recorded and before it
 * acts, so a test can kill the process with -9 exactly there and check that a restart resumes it.
 */
async function failpoint(ctx: TaskContext, kind: OperationKind, phase: string): Promise<void> {
  if (ctx.config.environment === 'production') return;
  if (process.env.FAILPOINT_HOLD !== `${kind}:${phase}`) return;
  ctx.log.warn({ kind, phase }, 'FAILPOINT_HOLD: holding the operation here until the process is killed');
  await new Promise(() => {});
}
