// A server import (document 2 §3 "server import" rows; DECISIONS.md §6 "Imports"), an operation holding
// the service in three phases that the import's own status follows: `preparing` pauses the workloads
// still running on the volume, `running` copies over SFTP (features/imports/transfer.ts), `cleaning_up`
// starts again what was paused and erases the password. However the copy ends (done, cancelled, failed)
// the cleaning up runs, and how it ended is recorded before it, so a restart in any phase (kill -9)
// resumes there: a copy resumed reconnects and skips the files already complete, one whose end was
// decided (failed, cancelled) is not copied again. DECISIONS.md §8 "Imports against hostile servers":
// the copy's limits and stalls are features/imports/guard.ts and listing.ts.
import { recordAuditOf, type AuditActor } from '../../audit/record.js';
import type { Db } from '../../db/client.js';
import * as store from '../../features/imports/store.js';
import { RemoteGuard } from '../../features/imports/guard.js';
import { IMPORT_LIMITS } from '../../features/imports/limits.js';
import { connect, copyTree, deleteExtraneous, readRemoteTree, type Progress } from '../../features/imports/transfer.js';
import type { TaskContext } from '../../jobs/context.js';
import { FileLayerError } from '../../substrate/local/files/index.js';
import type { VolumeImportAccess } from '../../substrate/volume-access.js';
import { OperationError } from '../errors.js';
import type { OperationDefinition } from '../run.js';
import type { OperationRow } from '../store.js';
import { loadPowerState, startUnits, stopUnits, type PowerState } from './power.js';

/** A remote clock a little behind ours still counts a file changed in the previous import's second. */
const RACY_SLACK_SEC = 2;

interface ImportState {
  power: PowerState;
  row: store.ImportRow;
  organizationId: string;
  projectId: string;
  input: { actor?: AuditActor; request_id?: string };
}

const PROGRESS_EVERY_MS = 250;
const CANCEL_POLL_MS = 250;

/** The units on the import's volume, as the power state's subject (the ones `ids` names). */
const unitsOf = (s: ImportState, ids: readonly string[]): PowerState => ({
  ...s.power,
  units: s.power.units.filter((u) => ids.includes(u.id)),
});

async function preparing(s: ImportState, ctx: TaskContext): Promise<void> {
  const running: string[] = [];
  for (const unit of s.power.units) {
    if (unit.volume_id !== s.row.volume_id) continue;
    if ((await ctx.substrate.unitState(unit.id)) === 'running') running.push(unit.id);
  }
  // Recorded before stopping, merged with what an earlier run of this phase paused.
  const paused = [...new Set([...s.row.paused_unit_ids, ...running])];
  await store.setPaused(ctx.sql, s.row.id, paused);
  s.row.paused_unit_ids = paused;
  await stopUnits(unitsOf(s, running), ctx);
}

/** Removes imports' temporary files; a volume that cannot be swept now is swept by the next import. */
async function sweep(target: VolumeImportAccess, ctx: TaskContext): Promise<void> {
  await target.removeLeftovers().catch((err: unknown) => {
    ctx.log.warn({ error: err instanceof Error ? err.message : String(err) }, 'import: temporary files not swept');
  });
}

async function running(s: ImportState, ctx: TaskContext): Promise<void> {
  // How the copy ended is decided once: a run killed after deciding (a failure, a cancel) is not copied
  // again at the next start, and a cancel asked for while no run was looking ends it here.
  if ((await store.decidedOutcome(ctx.sql, s.row.id)).outcome) return;
  if (await store.cancelRequested(ctx.sql, s.row.id)) {
    await store.decideOutcome(ctx.sql, s.row.id, 'cancelled', null);
    return;
  }
  const sealed = await store.sealedPassword(ctx.sql, s.row.id);
  const target = ctx.substrate.volumeImportTarget(s.row.volume_id);
  if (!sealed || !target) {
    await store.decideOutcome(ctx.sql, s.row.id, 'failed', 'The import can no longer reach its source or volume.');
    return;
  }
  // Temporary files of earlier imports killed mid-file go first, before anything can fail (issue 33).
  await sweep(target, ctx);
  const guard = new RemoteGuard({
    now: () => ctx.clock.now().getTime(),
    stallMs: IMPORT_LIMITS.stallMs,
    peer: `${s.row.address}:${s.row.port}`,
  });
  const poll = setInterval(() => {
    store
      .cancelRequested(ctx.sql, s.row.id)
      .then((yes) => {
        if (yes) guard.stop({ status: 'cancelled' });
      })
      .catch(() => undefined);
  }, CANCEL_POLL_MS);
  let last = 0;
  let writing: Promise<unknown> = Promise.resolve();
  const report = (p: Progress, force = false) => {
    if (!force && Date.now() - last < PROGRESS_EVERY_MS) return;
    last = Date.now();
    const snapshot = { ...p };
    writing = writing
      .then(() => store.setProgress(ctx.sql, s.row.id, snapshot, ctx.clock.now()))
      .catch(() => undefined);
  };
  let remote: Awaited<ReturnType<typeof connect>> | null = null;
  let latest: Progress = { bytes: 0, files: 0, currentFile: null };
  try {
    remote = await connect(
      {
        address: s.row.address,
        port: s.row.port,
        username: s.row.username,
        password: await ctx.box.openText('import-password', sealed),
      },
      guard,
    );
    const tree = await readRemoteTree(remote.sftp, s.row.remote_path, guard);
    await store.setTotals(
      ctx.sql,
      s.row.id,
      tree.files.reduce((sum, f) => sum + f.size, 0),
      tree.files.length,
      ctx.clock.now(),
    );
    const previous = await store.previousImportStart(ctx.sql, s.row);
    await copyTree({
      sftp: remote.sftp,
      tree,
      target,
      guard,
      racyFromSec: previous ? Math.floor(previous.getTime() / 1000) - RACY_SLACK_SEC : null,
      onProgress: (p) => {
        latest = p;
        report(p);
      },
    });
    report(latest, true);
    await writing;
    if (s.row.delete_extraneous) await deleteExtraneous(tree, target, guard);
    await store.decideOutcome(ctx.sql, s.row.id, 'succeeded', null);
  } catch (err) {
    report(latest, true);
    await writing;
    // A stop (cancel, stall) is why whatever else failed did; what the customer can act on is said;
    // anything else is the platform's, and retried by the queue.
    const stopped = guard.reason;
    if (stopped) {
      await store.decideOutcome(ctx.sql, s.row.id, stopped.status, stopped.status === 'failed' ? stopped.error : null);
    } else if (err instanceof OperationError) {
      await store.decideOutcome(ctx.sql, s.row.id, 'failed', err.message);
    } else if (err instanceof FileLayerError) {
      await store.decideOutcome(ctx.sql, s.row.id, 'failed', `Writing into the volume failed: ${err.detail}`);
    } else {
      throw err;
    }
  } finally {
    clearInterval(poll);
    guard.close();
    remote?.close();
  }
}

async function cleaningUp(s: ImportState, ctx: TaskContext): Promise<void> {
  await store.erasePassword(ctx.sql, s.row.id);
  // A failed or cancelled copy leaves no temporary file behind, a killed run's included.
  if ((await store.decidedOutcome(ctx.sql, s.row.id)).outcome !== 'succeeded') {
    const target = ctx.substrate.volumeImportTarget(s.row.volume_id);
    if (target) await sweep(target, ctx);
  }
  // Started again only if the service was not meanwhile suspended or ended (converge acts then).
  const [service] = await ctx.sql<{ status: string }[]>`
    select status from service_instances where id = ${s.row.service_instance_id}`;
  if (service?.status === 'stopped' || service?.status === 'running') {
    await startUnits(unitsOf(s, s.row.paused_unit_ids), ctx);
  }
}

export const importOperation: OperationDefinition<ImportState> = {
  async load(ctx, op: OperationRow) {
    const row = await store.importOfOperation(ctx.sql, op.id);
    if (!row) throw new Error(`operation ${op.id}: its import is gone`);
    const [owner] = await ctx.sql<{ project_id: string; organization_id: string }[]>`
      select s.project_id, p.organization_id from service_instances s join projects p on p.id = s.project_id
      where s.id = ${row.service_instance_id}`;
    return {
      power: await loadPowerState(ctx, op),
      row,
      organizationId: owner!.organization_id,
      projectId: owner!.project_id,
      input: op.input as ImportState['input'],
    };
  },
  phases: [
    { name: 'preparing', progress: 1, run: preparing },
    { name: 'running', progress: 5, run: running },
    { name: 'cleaning_up', progress: 95, run: cleaningUp },
  ],
  async entered(s, phase, ctx) {
    await store.setStatus(ctx.sql, s.row.id, phase as store.ImportStatus, ctx.clock.now());
  },
  async outcome(s, ctx) {
    const decided = await store.decidedOutcome(ctx.sql, s.row.id);
    return { status: decided.outcome ?? 'succeeded', error: decided.outcome === 'failed' ? decided.error : null };
  },
  async complete(tx: Db, s, now) {
    const decided = await store.decidedOutcome(tx, s.row.id);
    const status = decided.outcome ?? 'succeeded';
    const ended = await store.finishImport(tx, s.row.id, { status, error: status === 'failed' ? decided.error : null }, now);
    if (ended) {
      await recordAuditOf(tx, { requestId: s.input.request_id ?? null, at: now }, s.input.actor ?? { userId: null }, {
        organizationId: s.organizationId,
        action: `import.${status}`,
        target: { type: 'import', id: s.row.id },
        projectId: s.projectId,
        serviceInstanceId: s.row.service_instance_id,
      });
    }
  },
  async fail(tx: Db, op, now) {
    const row = await store.importOfOperation(tx, op.id);
    if (row) {
      await store.finishImport(tx, row.id, { status: 'failed', error: 'The import failed on the platform.' }, now);
    }
  },
};
