// Which resource a console, shell or screen ticket may name (document 2 §4 "Consoles and tickets"): the
// product must have the feature and the substrate a gateway; every miss is the 404 of an unknown id.
// A service that is not serviceable has nothing running to attach to: 422, as for a reinstall.
import type { Db } from '../../db/client.js';
import { unprocessable } from '../../http/errors.js';
import { serviceNotFound } from '../services/access.js';
import { findResource, type ResourceRow, type ServiceAccessRow } from '../services/store.js';
import { substrateCapabilities } from '../../substrate/capabilities.js';
import type { DriverName } from '../../substrate/driver.js';
import { productFeatures } from './store.js';

export async function ticketTarget(
  tx: Db,
  access: ServiceAccessRow,
  resourceId: string,
  need: { feature: 'console' | 'shell' | 'screen'; kind: ResourceRow['kind']; substrate: DriverName },
): Promise<ResourceRow> {
  const capabilities = substrateCapabilities(need.substrate);
  const resource = await findResource(tx, access.service.id, resourceId);
  if (
    !resource ||
    resource.kind !== need.kind ||
    !capabilities.gateway ||
    (need.feature === 'screen' && !capabilities.framebuffer) ||
    !(await productFeatures(tx, access.service.product_id)).includes(need.feature)
  ) {
    throw serviceNotFound();
  }
  // A stopped service may be attached to (the gateway answers 503 while nothing runs); a suspended or ended one not.
  if (access.subscription_status !== 'active' || !['running', 'stopped'].includes(access.service.status)) {
    throw unprocessable(
      'subscription-not-serviceable',
      `Nothing runs to attach to: the subscription is ${access.subscription_status} and the service ${access.service.status}.`,
    );
  }
  return resource;
}
