// Backups of a service's volume (document 2 §4 "Backups"; DECISIONS.md §6 "Backups"): list, create,
// delete, restore. Create and restore are operations holding the service (operations/kinds/backup.ts);
// the ceiling is counted under the service row's lock, so parallel creates never pass it.
import { randomUUID } from 'node:crypto';
import { actorOf, recordAudit } from '../../audit/record.js';
import type { Db } from '../../db/client.js';
import { conflict, unprocessable } from '../../http/errors.js';
import type { AreaHandlers, RequestContext, UserAuth } from '../../http/handler.js';
import { enqueue } from '../../jobs/queue.js';
import { startOperation } from '../../operations/engine.js';
import type { BackupOperationInput } from '../../operations/kinds/backup.js';
import { idempotent } from '../../operations/idempotency.js';
import { substrateCapabilities } from '../../substrate/capabilities.js';
import { findProduct } from '../catalog/store.js';
import { requireService, requireServiceable, serviceNotFound } from '../services/access.js';
import { findResource, type ResourceRow, type ServiceAccessRow } from '../services/store.js';
import { defaultBackupName, toBackup } from './mappers.js';
import * as store from './store.js';

/** Backups a volume may hold (DECISIONS.md §6 "Products, features and limits"). */
export const MAX_BACKUPS = 5;

interface VolumeAccess {
  access: ServiceAccessRow;
  volume: ResourceRow;
}

/**
 * The service and its volume for the caller; anything else (a product without backups, a resource
 * that is not this service's volume, no access) is the 404 of an unknown id.
 */
async function requireVolume(
  db: Db,
  auth: UserAuth,
  path: { id: string; resource_id: string },
  permission: 'services.read' | 'services.manage',
): Promise<VolumeAccess> {
  const access = await requireService(db, { serviceId: path.id }, auth, permission, {
    lock: permission === 'services.manage',
  });
  const product = await findProduct(db, access.service.product_id);
  const volume = await findResource(db, access.service.id, path.resource_id);
  if (!product?.features.includes('backups') || volume?.kind !== 'volume') throw serviceNotFound();
  return { access, volume };
}

async function audit(
  tx: Db,
  ctx: RequestContext,
  auth: UserAuth,
  { access }: VolumeAccess,
  action: 'backup.deleted',
  backupId: string,
): Promise<void> {
  await recordAudit(tx, ctx, actorOf(auth), {
    organizationId: access.organization_id,
    action,
    target: { type: 'backup', id: backupId },
    projectId: access.service.project_id,
    serviceInstanceId: access.service.id,
  });
}

/**
 * A backup or restore is audited when its operation succeeds (operations/kinds/backup.ts), as done by
 * whoever asked: the operation carries the caller and the request's id until then.
 */
function auditedInput(ctx: RequestContext, auth: UserAuth, backupId: string): BackupOperationInput {
  return { backup_id: backupId, actor: actorOf(auth), request_id: ctx.requestId };
}

export const backupHandlers: AreaHandlers<'backupList' | 'backupCreate' | 'backupDelete' | 'backupRestore'> =
  {
    async backupList({ path, auth, ctx }) {
      const { volume } = await requireVolume(ctx.sql, auth, path, 'services.read');
      const backups = await store.listBackups(ctx.sql, volume.id);
      return { status: 200, body: { backups: backups.map(toBackup), max_backups: MAX_BACKUPS } };
    },

    async backupCreate({ path, body, auth, ctx }) {
      return idempotent(ctx, auth, 'backupCreate', { path, body: body ?? {} }, async (tx) => {
        const va = await requireVolume(tx, auth, path, 'services.manage');
        requireServiceable(va.access);
        if (!substrateCapabilities(ctx.config.substrate).snapshots) {
          throw unprocessable('snapshots-unsupported', 'This platform cannot take snapshots of volumes.');
        }
        // Counted under the service row's lock (requireVolume took it): the ceiling holds under any race.
        if ((await store.countBackups(tx, va.volume.id)) >= MAX_BACKUPS) {
          throw unprocessable(
            'quota-exceeded',
            `This volume holds ${MAX_BACKUPS} backups, its most; delete one first.`,
            { limit: MAX_BACKUPS },
          );
        }
        const now = ctx.clock.now();
        const id = randomUUID();
        const op = await startOperation(
          tx,
          {
            serviceId: va.access.service.id,
            resourceId: va.volume.id,
            kind: 'backup',
            input: auditedInput(ctx, auth, id),
            createdBy: auth.userId,
          },
          now,
        );
        const name = body?.name?.trim() || defaultBackupName(now);
        const backup = await store.insertBackup(
          tx,
          { id, serviceId: va.access.service.id, volumeId: va.volume.id, name, createdBy: auth.userId },
          now,
        );
        return { status: 202 as const, body: { backup: toBackup(backup), operation_id: op.id } };
      });
    },

    async backupDelete({ path, auth, ctx }) {
      await ctx.sql.begin(async (tx) => {
        const va = await requireVolume(tx, auth, path, 'services.manage');
        const backup = await store.findBackup(tx, va.volume.id, path.backup_id);
        if (!backup) throw serviceNotFound();
        if (backup.status === 'creating' || backup.status === 'restoring') {
          throw conflict(
            'operation-in-progress',
            `The backup is ${backup.status}; delete it once that ends.`,
          );
        }
        await store.markDeleted(tx, backup.id, ctx.clock.now());
        await enqueue(tx, 'delete_backup', { backup_id: backup.id });
        await audit(tx, ctx, auth, va, 'backup.deleted', backup.id);
      });
      return { status: 204 };
    },

    async backupRestore({ path, auth, ctx }) {
      return idempotent(ctx, auth, 'backupRestore', { path }, async (tx) => {
        const va = await requireVolume(tx, auth, path, 'services.manage');
        const backup = await store.findBackup(tx, va.volume.id, path.backup_id);
        if (!backup) throw serviceNotFound();
        requireServiceable(va.access);
        if (backup.status === 'restoring') {
          throw conflict('operation-in-progress', 'This backup is being restored already.');
        }
        if (backup.status !== 'ready') {
          throw unprocessable(
            'backup-not-ready',
            `The backup is ${backup.status}; only a ready backup can be restored.`,
          );
        }
        const op = await startOperation(
          tx,
          {
            serviceId: va.access.service.id,
            resourceId: va.volume.id,
            kind: 'restore',
            input: auditedInput(ctx, auth, backup.id),
            createdBy: auth.userId,
          },
          ctx.clock.now(),
        );
        const restoring = await store.markRestoring(tx, backup.id);
        return { status: 202 as const, body: { backup: toBackup(restoring), operation_id: op.id } };
      });
    },
  };
