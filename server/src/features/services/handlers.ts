// Service instances (document 2 §1, §4 "Resources"; DECISIONS.md §4 "Service instances", shares): reads,
// per-service shares and the operation poll. Every failure of access is the 404 of an unknown id.
import { actorOf, recordAudit } from '../../audit/record.js';
import type { Db } from '../../db/client.js';
import { notFound } from '../../http/errors.js';
import type { AreaHandlers, RequestContext, UserAuth } from '../../http/handler.js';
import { requireService } from './access.js';
import { toOperation, toResourceList, toService, toShare } from './mappers.js';
import { liveUnitStates } from './unit-view.js';
import { powerHandlers } from './power.js';
import { reinstallHandlers } from './reinstall.js';
import * as store from './store.js';
import type { ServiceRow } from './store.js';
import { readableProject } from '../projects/access.js';
// The page arithmetic every paged list shares (DECISIONS.md §1).
import { pageMeta, pageWindow } from '../audit/paging.js';

export const serviceHandlers: AreaHandlers<
  | 'serviceInstanceList'
  | 'serviceInstanceGet'
  | 'serviceInstanceResourceList'
  | 'subscriptionResourceList'
  | 'serviceShareList'
  | 'serviceShareCreate'
  | 'serviceShareDelete'
  | 'serviceOperationGet'
  | 'serviceOperationList'
  | 'vpsReinstall'
  | 'serviceInstancePower'
> = {
  async serviceInstanceList({ path, auth, ctx }) {
    const { project } = await readableProject(ctx.sql, path.id, auth, 'services.read');
    const rows = await store.listProjectServices(ctx.sql, project.id);
    return { status: 200, body: rows.map(toService) };
  },

  async serviceInstanceGet({ path, auth, ctx }) {
    const { service } = await requireService(ctx.sql, { serviceId: path.id }, auth, 'services.read');
    return { status: 200, body: toService(service) };
  },

  async serviceInstanceResourceList({ path, auth, ctx }) {
    const { service } = await requireService(ctx.sql, { serviceId: path.id }, auth, 'services.read', {
      shareHolders: true,
    });
    const rows = await store.listResources(ctx.sql, service.id);
    return { status: 200, body: toResourceList(rows, await liveUnitStates(ctx.substrate, rows)) };
  },

  async subscriptionResourceList({ path, auth, ctx }) {
    const { service } = await requireService(ctx.sql, { subscriptionId: path.id }, auth, 'services.read', {
      shareHolders: true,
    });
    const rows = await store.listResources(ctx.sql, service.id);
    const list = toResourceList(rows, await liveUnitStates(ctx.substrate, rows));
    return {
      status: 200,
      body: { ...list, service_instance: { id: service.id, name: service.name, slug: service.slug } },
    };
  },

  async serviceShareList({ path, auth, ctx }) {
    const { service } = await requireService(ctx.sql, { serviceId: path.id }, auth, 'services.share');
    return { status: 200, body: (await store.listShares(ctx.sql, service.id)).map(toShare) };
  },

  async serviceShareCreate({ path, body, auth, ctx }) {
    return ctx.sql.begin(async (tx) => {
      const { service, organization_id } = await requireService(
        tx,
        { serviceId: path.id },
        auth,
        'services.share',
        {
          lock: true,
        },
      );
      const added = await store.addShare(tx, service.id, body.user_id, auth.userId, ctx.clock.now());
      if (!added) throw notFound('No such user.');
      if (added.created) {
        await recordShareAudit(tx, ctx, auth, organization_id, service, 'service.shared', body.user_id);
      }
      return added.created
        ? { status: 201 as const, body: toShare(added.share) }
        : { status: 200 as const, body: toShare(added.share) };
    });
  },

  async serviceShareDelete({ path, auth, ctx }) {
    await ctx.sql.begin(async (tx) => {
      const { service, organization_id } = await requireService(
        tx,
        { serviceId: path.id },
        auth,
        'services.share',
        {
          lock: true,
        },
      );
      if (!(await store.removeShare(tx, service.id, path.user_id)))
        throw notFound('That user holds no share of this service.');
      await recordShareAudit(tx, ctx, auth, organization_id, service, 'service.unshared', path.user_id);
    });
    return { status: 204 };
  },

  async serviceOperationGet({ path, auth, ctx }) {
    // One statement: clients poll this route while they wait.
    const { operation: op } = await requireService(ctx.sql, { serviceId: path.id }, auth, 'services.read', {
      operationId: path.operation_id,
    });
    // The caller may read the service, so what is missing is the operation, and it may be told so.
    if (!op) throw notFound('No such operation of this service.');
    return { status: 200, body: toOperation(op) };
  },

  async serviceOperationList({ path, query, auth, ctx }) {
    const { service } = await requireService(ctx.sql, { serviceId: path.id }, auth, 'services.read');
    const window = pageWindow(query.page, query.page_size);
    const { total, rows } = await store.listOperations(ctx.sql, service.id, {
      limit: window.pageSize,
      offset: window.offset,
    });
    return { status: 200, body: { data: rows.map(toOperation), meta: pageMeta(window, total) } };
  },

  ...reinstallHandlers,
  ...powerHandlers,
};

async function recordShareAudit(
  tx: Db,
  ctx: RequestContext,
  auth: UserAuth,
  organizationId: string,
  service: ServiceRow,
  action: 'service.shared' | 'service.unshared',
  userId: string,
): Promise<void> {
  await recordAudit(tx, ctx, actorOf(auth), {
    organizationId,
    action,
    target: { type: 'user', id: userId },
    projectId: service.project_id,
    serviceInstanceId: service.id,
  });
}
