// Which volume a file route reaches (document 2 §4 "Files"): the service's volume itself, or a workload
// of the service (its volume). A product without `files`, another resource, or a caller who may not see
// or change the service is the 404 of an unknown id (document 2 §5), as for backups and consoles.
import type { Db } from '../../db/client.js';
import { unprocessable } from '../../http/errors.js';
import type { UserAuth } from '../../http/handler.js';
import type { SubstrateDriver } from '../../substrate/driver.js';
import type { VolumeFileAccess } from '../../substrate/volume-access.js';
import { findProduct } from '../catalog/store.js';
import { requireService, serviceable, serviceNotFound } from '../services/access.js';
import { findResource, type ResourceRow, type ServiceAccessRow } from '../services/store.js';

export interface FilesTarget {
  access: ServiceAccessRow;
  /** The resource named in the path (the volume or a workload on it). */
  resource: ResourceRow;
  /** The volume whose files these are. */
  volume: ResourceRow;
  files: VolumeFileAccess;
}

export async function filesTarget(
  db: Db,
  substrate: SubstrateDriver | null,
  auth: UserAuth,
  path: { id: string; resource_id: string },
  permission: 'services.read' | 'services.manage',
): Promise<FilesTarget> {
  const access = await requireService(db, { serviceId: path.id }, auth, permission);
  const product = await findProduct(db, access.service.product_id);
  const resource = await findResource(db, access.service.id, path.resource_id);
  if (!product?.features.includes('files') || !resource) throw serviceNotFound();
  let volume: ResourceRow | undefined = resource;
  if (resource.kind === 'workload') {
    volume = resource.volume_id ? await findResource(db, access.service.id, resource.volume_id) : undefined;
  }
  if (volume?.kind !== 'volume') throw serviceNotFound();
  const files = substrate?.volumeFiles(volume.id) ?? null;
  if (!files) throw serviceNotFound();
  if (permission === 'services.manage' && !serviceable(access)) {
    throw unprocessable(
      'subscription-not-serviceable',
      `The service's files cannot be changed now: its subscription is ${access.subscription_status} and the service ${access.service.status}.`,
    );
  }
  return { access, resource, volume, files };
}
