// Power actions (DECISIONS.md §6 "Power"): start, stop or restart a service's units, as an operation
// holding the service (operations/kinds/power.ts runs it).
import { actorOf, recordAudit } from '../../audit/record.js';
import { unprocessable } from '../../http/errors.js';
import type { AreaHandlers } from '../../http/handler.js';
import { startOperation } from '../../operations/engine.js';
import { idempotent } from '../../operations/idempotency.js';
import { requireService, serviceable } from './access.js';

export const powerHandlers: AreaHandlers<'serviceInstancePower'> = {
  async serviceInstancePower({ path, body, auth, ctx }) {
    return idempotent(ctx, auth, 'serviceInstancePower', { path, body }, async (tx) => {
      const access = await requireService(tx, { serviceId: path.id }, auth, 'services.manage', {
        lock: true,
      });
      const { service } = access;
      // A service still provisioning is held by that operation: the lease answers 409 below.
      if (service.status !== 'provisioning' && !serviceable(access)) {
        throw unprocessable(
          'subscription-not-serviceable',
          `The service cannot be changed now: its subscription is ${access.subscription_status} and the service ${service.status}.`,
        );
      }
      const op = await startOperation(
        tx,
        { serviceId: service.id, resourceId: null, kind: body.action, input: {}, createdBy: auth.userId },
        ctx.clock.now(),
      );
      await recordAudit(tx, ctx, actorOf(auth), {
        organizationId: access.organization_id,
        action: `service.power_${body.action}`,
        target: { type: 'service_instance', id: service.id },
        projectId: service.project_id,
        serviceInstanceId: service.id,
      });
      return {
        status: 202 as const,
        body: { operation_id: op.id, service_instance_id: service.id, action: body.action },
      };
    });
  },
};
