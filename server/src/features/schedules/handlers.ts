// Schedules of a service (DECISIONS.md §8 "Schedules"): CRUD, gated as changing the service; every
// refusal of access is the 404 of an unknown id. Runs are the worker's (run.ts).
import { randomUUID } from 'node:crypto';
import { actorOf, recordAudit } from '../../audit/record.js';
import type { Db } from '../../db/client.js';
import { unprocessable } from '../../http/errors.js';
import type { AreaHandlers, RequestContext, UserAuth } from '../../http/handler.js';
import { substrateCapabilities } from '../../substrate/capabilities.js';
import { findProduct } from '../catalog/store.js';
import { requireService, serviceNotFound } from '../services/access.js';
import type { ServiceAccessRow } from '../services/store.js';
import { toSchedule } from './mappers.js';
import * as store from './store.js';
import { resolveSchedule } from './validate.js';

/** Schedules a service may have (DECISIONS.md §8). */
export const MAX_SCHEDULES = 10;

/** The service for a caller who may change it, its row locked for the transaction. */
const requireManaged = (tx: Db, auth: UserAuth, serviceId: string) =>
  requireService(tx, { serviceId }, auth, 'services.manage', { lock: true });

/** A command needs a console, a backup backups and snapshots: else 422, checked after the shape. */
async function requireActionSupported(
  tx: Db,
  ctx: RequestContext,
  access: ServiceAccessRow,
  action: store.ScheduleAction,
): Promise<void> {
  const features = (await findProduct(tx, access.service.product_id))?.features ?? [];
  const lacks =
    action === 'command'
      ? !features.includes('console')
      : action === 'backup' &&
        (!features.includes('backups') || !substrateCapabilities(ctx.config.substrate).snapshots);
  if (lacks) {
    throw unprocessable(
      'schedule-action-unsupported',
      action === 'command'
        ? 'This service has no console to send a command to.'
        : 'This service cannot be backed up here.',
    );
  }
}

async function audit(
  tx: Db,
  ctx: RequestContext,
  auth: UserAuth,
  access: ServiceAccessRow,
  action: 'schedule.created' | 'schedule.updated' | 'schedule.deleted',
  scheduleId: string,
): Promise<void> {
  await recordAudit(tx, ctx, actorOf(auth), {
    organizationId: access.organization_id,
    action,
    target: { type: 'schedule', id: scheduleId },
    projectId: access.service.project_id,
    serviceInstanceId: access.service.id,
  });
}

export const scheduleHandlers: AreaHandlers<
  'scheduleList' | 'scheduleGet' | 'scheduleCreate' | 'scheduleUpdate' | 'scheduleDelete'
> = {
  async scheduleList({ path, auth, ctx }) {
    const access = await requireService(ctx.sql, { serviceId: path.id }, auth, 'services.manage');
    const rows = await store.listSchedules(ctx.sql, access.service.id);
    return { status: 200, body: { data: rows.map(toSchedule), max_schedules: MAX_SCHEDULES } };
  },

  async scheduleGet({ path, auth, ctx }) {
    const access = await requireService(ctx.sql, { serviceId: path.id }, auth, 'services.manage');
    const row = await store.findSchedule(ctx.sql, access.service.id, path.schedule_id);
    if (!row) throw serviceNotFound();
    return { status: 200, body: toSchedule(row) };
  },

  async scheduleCreate({ path, body, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      const access = await requireManaged(tx, auth, path.id);
      const now = ctx.clock.now();
      const fields = resolveSchedule(null, body, now);
      await requireActionSupported(tx, ctx, access, fields.action);
      // Counted under the service row's lock: parallel creates never pass the ceiling.
      if ((await store.countSchedules(tx, access.service.id)) >= MAX_SCHEDULES) {
        throw unprocessable(
          'quota-exceeded',
          `This service has ${MAX_SCHEDULES} schedules, its most; delete one first.`,
          { limit: MAX_SCHEDULES },
        );
      }
      const id = randomUUID();
      await store.insertSchedule(
        tx,
        { ...fields, id, serviceId: access.service.id, createdBy: auth.userId },
        now,
      );
      await audit(tx, ctx, auth, access, 'schedule.created', id);
      return {
        status: 201 as const,
        body: toSchedule((await store.findSchedule(tx, access.service.id, id))!),
      };
    });
  },

  async scheduleUpdate({ path, body, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      const access = await requireManaged(tx, auth, path.id);
      const current = await store.findSchedule(tx, access.service.id, path.schedule_id);
      if (!current) throw serviceNotFound();
      const fields = resolveSchedule(current, body, ctx.clock.now());
      await requireActionSupported(tx, ctx, access, fields.action);
      await store.updateSchedule(tx, current.id, fields, ctx.clock.now());
      await audit(tx, ctx, auth, access, 'schedule.updated', current.id);
      return {
        status: 200 as const,
        body: toSchedule((await store.findSchedule(tx, access.service.id, current.id))!),
      };
    });
  },

  async scheduleDelete({ path, auth, ctx }) {
    await ctx.sql.begin(async (tx) => {
      const access = await requireManaged(tx, auth, path.id);
      const current = await store.findSchedule(tx, access.service.id, path.schedule_id);
      if (!current) throw serviceNotFound();
      await store.deleteSchedule(tx, current.id);
      await audit(tx, ctx, auth, access, 'schedule.deleted', current.id);
    });
    return { status: 204 };
  },
};
