// Which resource a console, shell or screen ticket may name (document 2 §4 "Consoles and tickets"): the
// product must have the feature and the substrate a gateway; every miss is the 404 of an unknown id.
// A suspended or ended service is 422, as for a reinstall. A stopped one has nothing running to attach
// to: the seed's 404 "no running pod", whose detail (to a caller who may change the service, so it
// tells nothing a stranger could not see) says to start it.
import type { Db } from '../../db/client.js';
import { notFound, unprocessable } from '../../http/errors.js';
import { serviceNotFound } from '../services/access.js';
import { findResource, type ResourceRow, type ServiceAccessRow } from '../services/store.js';
import { substrateCapabilities } from '../../substrate/capabilities.js';
import type { DriverName } from '../../substrate/driver.js';
import { productFeatures } from './store.js';

export async function ticketTarget(
  tx: Db,
  access: ServiceAccessRow,
  resourceId: string,
  need: { feature: 'console' | 'shell' | 'screen'; kinds: ResourceRow['kind'][]; substrate: DriverName },
): Promise<ResourceRow> {
  const resource = await featureTarget(tx, access, resourceId, need);
  if (access.subscription_status !== 'active' || !['running', 'stopped'].includes(access.service.status)) {
    throw unprocessable(
      'subscription-not-serviceable',
      `Nothing runs to attach to: the subscription is ${access.subscription_status} and the service ${access.service.status}.`,
    );
  }
  if (access.service.status !== 'running' || resource.status !== 'running') {
    const what = access.service.status !== 'running' ? 'service' : 'resource';
    const status = what === 'service' ? access.service.status : resource.status;
    throw notFound(
      `The ${what} is ${status}: nothing runs to attach a ${need.feature} to.` +
        (status === 'stopped' ? ' Start it first (POST /service-instances/{id}/power).' : ''),
    );
  }
  return resource;
}

/**
 * The resource when the product has the feature, the substrate what it takes, and the resource is of
 * one of `kinds`, whatever its state (a screen hold may be refreshed or released on a stopped machine).
 */
export async function featureTarget(
  tx: Db,
  access: ServiceAccessRow,
  resourceId: string,
  need: { feature: 'console' | 'shell' | 'screen'; kinds: ResourceRow['kind'][]; substrate: DriverName },
): Promise<ResourceRow> {
  const capabilities = substrateCapabilities(need.substrate);
  const resource = await findResource(tx, access.service.id, resourceId);
  if (
    !resource ||
    !need.kinds.includes(resource.kind) ||
    !capabilities.gateway ||
    (need.feature === 'screen' && !capabilities.framebuffer) ||
    !(await productFeatures(tx, access.service.product_id)).includes(need.feature)
  ) {
    throw serviceNotFound();
  }
  return resource;
}
