// VPS reinstall (document 2 §4 "VPS reinstall"): the request's rules, checked in the order a caller can
// act on them, then an operation that waits behind a backup, restore or deployment holding the service.
import { actorOf, recordAudit } from '../../audit/record.js';
import { invalidFieldValue, unprocessable } from '../../http/errors.js';
import type { AreaHandlers } from '../../http/handler.js';
import { startOperation } from '../../operations/engine.js';
import { idempotent } from '../../operations/idempotency.js';
import { installableImage } from '../catalog/images.js';
import { findProduct } from '../catalog/store.js';
import { requireService, serviceable, serviceNotFound } from './access.js';
import { findResource } from './store.js';

/** What a reinstall queues behind instead of answering 409 (SUBSTRATE.md "Durable operations"). */
const REINSTALL_WAITS_BEHIND = ['backup', 'restore', 'deployment'] as const;

export const reinstallHandlers: AreaHandlers<'vpsReinstall'> = {
  async vpsReinstall({ path, body, auth, ctx }) {
    return idempotent(ctx, auth, 'vpsReinstall', { path, body }, async (tx) => {
      const access = await requireService(tx, { serviceId: path.id }, auth, 'services.manage', {
        lock: true,
      });
      const { service } = access;
      const resource = await findResource(tx, service.id, path.resource_id);
      if (!resource) throw serviceNotFound();
      if (!body.confirm) {
        throw invalidFieldValue('A reinstall erases the machine: send confirm: true.', [
          { location: 'body', pointer: '/confirm', message: 'must be true' },
        ]);
      }
      if (access.product_kind !== 'vps' || resource.kind !== 'virtual_machine') {
        throw unprocessable(
          'not-a-virtual-machine',
          'Only the virtual machine of a VPS service can be reinstalled.',
        );
      }
      const product = (await findProduct(tx, service.product_id))!;
      const image = await installableImage(tx, product, body.os_image, resource.os_image);
      if (!serviceable(access)) {
        throw unprocessable(
          'subscription-not-serviceable',
          `The service cannot be changed now: its subscription is ${access.subscription_status} and the service ${service.status}.`,
        );
      }
      const op = await startOperation(
        tx,
        {
          serviceId: service.id,
          resourceId: resource.id,
          kind: 'reinstall',
          input: { os_image: image.id },
          createdBy: auth.userId,
          waitsBehind: REINSTALL_WAITS_BEHIND,
        },
        ctx.clock.now(),
      );
      await recordAudit(tx, ctx, actorOf(auth), {
        organizationId: access.organization_id,
        action: 'service.reinstall_started',
        target: { type: 'resource', id: resource.id },
        projectId: service.project_id,
        serviceInstanceId: service.id,
      });
      return {
        status: 202 as const,
        body: {
          operation_id: op.id,
          os_image: image.id,
          resource_id: resource.id,
          service_instance_id: service.id,
        },
      };
    });
  },
};
