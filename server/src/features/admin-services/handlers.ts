// Staff: provisioning a subscription with its service instance and resources, and suspending, resuming
// and ending it (DECISIONS.md §4, `manage_services`). Provisioning answers 202 with the operation the
// worker runs; suspend, resume and end change the records at once and leave the units to the
// convergence job.
import { actorOf, recordAudit } from '../../audit/record.js';
import { requireSystemPermission } from '../../authz/staff.js';
import type { Db } from '../../db/client.js';
import { invalidFieldValue, notFound, unprocessable } from '../../http/errors.js';
import type { AreaHandlers, RequestContext, UserAuth } from '../../http/handler.js';
import { enqueue } from '../../jobs/queue.js';
import { startOperation } from '../../operations/engine.js';
import { idempotent } from '../../operations/idempotency.js';
import { defaultImage, installableImage } from '../catalog/images.js';
import { findProduct } from '../catalog/store.js';
import { allocatePrimary } from '../external-access/primary.js';
import * as store from './store.js';
import type { SubscriptionRow } from './store.js';
import type { SubscriptionStatus } from '../services/store.js';

const toSubscription = (s: SubscriptionRow) => ({
  id: s.id,
  project_id: s.project_id,
  product_id: s.product_id,
  status: s.status,
  service_instance_id: s.service_instance_id,
  created_at: s.created_at.toISOString(),
  updated_at: s.updated_at.toISOString(),
});

/** Cents arithmetic on the catalog's decimal strings: money never passes through a float. */
const addMoney = (a: string, b: string): string => {
  const cents = (m: string) => BigInt(m.replace('.', ''));
  const total = (cents(a) + cents(b)).toString().padStart(3, '0');
  return `${total.slice(0, -2)}.${total.slice(-2)}`;
};

export const adminServiceHandlers: AreaHandlers<
  'adminSubscriptionCreate' | 'adminSubscriptionSuspend' | 'adminSubscriptionResume' | 'adminSubscriptionEnd'
> = {
  async adminSubscriptionCreate({ body, auth, ctx }) {
    await requireSystemPermission(ctx.sql, auth.userId, 'manage_services');
    return idempotent(ctx, auth, 'adminSubscriptionCreate', body, async (tx) => {
      const project = await store.holdProject(tx, body.project_id.toLowerCase());
      if (!project) throw notFound('No such project.');
      const product = await findProduct(tx, body.product_id.toLowerCase());
      if (!product) throw notFound('No such product.');
      let osImage: { id: string; monthly_fee: string } | null = null;
      if (product.kind === 'vps') {
        osImage = body.os_image
          ? await installableImage(tx, product, body.os_image)
          : ((await defaultImage(tx, product)) ?? null);
        if (!osImage)
          throw invalidFieldValue(
            'This product has no enabled image the plan meets at no extra fee: name one in os_image.',
          );
      } else if (body.os_image !== undefined) {
        throw invalidFieldValue(`A ${product.kind} product installs no operating system.`, [
          { location: 'body', pointer: '/os_image', message: 'only VPS products take an image' },
        ]);
      }
      const name = body.name.trim();
      const now = ctx.clock.now();
      const made = await store.insertService(
        tx,
        {
          project,
          product,
          name,
          price: osImage ? addMoney(product.monthly_fee, osImage.monthly_fee) : product.monthly_fee,
          osImage: osImage?.id ?? null,
          platformDomain: ctx.config.platformDomain,
          substrate: ctx.config.substrate,
        },
        now,
      );
      await allocatePrimary(
        tx,
        ctx.config,
        { serviceId: made.serviceId, unitId: made.unitId, productKind: product.kind },
        now,
      );
      const op = await startOperation(
        tx,
        {
          serviceId: made.serviceId,
          resourceId: made.unitId,
          kind: 'provision',
          input: { os_image: osImage?.id ?? null },
          createdBy: auth.userId,
        },
        now,
      );
      await recordAudit(tx, ctx, actorOf(auth), {
        organizationId: project.organization_id,
        action: 'subscription.activated',
        target: { type: 'subscription', id: made.subscriptionId },
        projectId: project.id,
        serviceInstanceId: made.serviceId,
      });
      return {
        status: 202 as const,
        body: {
          subscription_id: made.subscriptionId,
          service_instance_id: made.serviceId,
          operation_id: op.id,
        },
      };
    });
  },

  adminSubscriptionSuspend: ({ path, auth, ctx }) => transition(ctx, auth, path.id, 'suspended'),
  adminSubscriptionResume: ({ path, auth, ctx }) => transition(ctx, auth, path.id, 'active'),
  adminSubscriptionEnd: ({ path, auth, ctx }) => transition(ctx, auth, path.id, 'ended'),
};

const EVENT: Record<SubscriptionStatus, string> = {
  active: 'subscription.resumed',
  suspended: 'subscription.suspended',
  ended: 'subscription.ended',
};

/**
 * suspend (active → suspended), resume (suspended → active), end (any → ended). Asking for the state it
 * is in changes nothing and answers it; an ended subscription cannot be suspended or resumed.
 */
async function transition(ctx: RequestContext, auth: UserAuth, id: string, to: SubscriptionStatus) {
  await requireSystemPermission(ctx.sql, auth.userId, 'manage_services');
  const row = await ctx.sql.begin(async (tx: Db) => {
    const sub = await store.lockSubscription(tx, id.toLowerCase());
    if (!sub) throw notFound('No such subscription.');
    if (sub.status === to) return sub;
    if (sub.status === 'ended') {
      throw unprocessable(
        'subscription-ended',
        'The subscription has ended; it cannot be suspended or resumed.',
      );
    }
    const now = ctx.clock.now();
    const changed = await store.setSubscriptionStatus(tx, sub, to, now);
    await enqueue(tx, 'converge_service', { service_instance_id: sub.service_instance_id });
    await recordAudit(tx, ctx, actorOf(auth), {
      organizationId: sub.organization_id,
      action: EVENT[to],
      target: { type: 'subscription', id: sub.id },
      projectId: sub.project_id,
      serviceInstanceId: sub.service_instance_id,
    });
    return changed;
  });
  return { status: 200 as const, body: toSubscription(row) };
}
