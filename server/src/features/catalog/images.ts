// Which operating-system image a VPS may get (document 2 §4 "VPS reinstall"): an image of the product's
// own list that is enabled, whose minimum CPU, memory and storage the plan meets, and, for a reinstall,
// whose monthly fee is the installed image's (a different fee is an order change, not a reinstall).
// Provisioning follows the same rules without the fee.
import type { Db } from '../../db/client.js';
import { invalidFieldValue } from '../../http/errors.js';
import { listOperatingSystems, type OperatingSystemRow, type ProductRow } from './store.js';

type Plan = Pick<ProductRow, 'id' | 'cpu' | 'memory_mb' | 'storage_gb'>;

const refuse = (detail: string) =>
  invalidFieldValue(detail, [{ location: 'body', pointer: '/os_image', message: detail }]);

/** Why the plan cannot run the image, or null when it can. */
function unmet(image: OperatingSystemRow, plan: Plan): string | null {
  if (image.min_cpu > plan.cpu) return `needs ${image.min_cpu} CPU; the plan has ${plan.cpu}`;
  if (image.min_memory_mb > plan.memory_mb)
    return `needs ${image.min_memory_mb} MiB of memory; the plan has ${plan.memory_mb}`;
  if (image.min_storage_gb > plan.storage_gb)
    return `needs ${image.min_storage_gb} GB of storage; the plan has ${plan.storage_gb}`;
  return null;
}

/**
 * The image `imageId` if the plan may install it, else a 400 `invalid-field-value` naming the rule.
 * `installed` (a reinstall): the image now on the machine, whose fee the new one must match.
 */
export async function installableImage(
  db: Db,
  plan: Plan,
  imageId: string,
  installed: string | null = null,
): Promise<OperatingSystemRow> {
  const images = await listOperatingSystems(db, plan.id);
  const image = images.find((i) => i.id === imageId);
  if (!image) throw refuse(`"${imageId}" is not an operating system of this product.`);
  if (!image.enabled) throw refuse(`"${imageId}" is disabled; pick an enabled image.`);
  const why = unmet(image, plan);
  if (why) throw refuse(`"${imageId}" ${why}.`);
  if (installed !== null) {
    const current = images.find((i) => i.id === installed);
    if (current && current.monthly_fee !== image.monthly_fee) {
      throw refuse(
        `"${imageId}" costs ${image.monthly_fee} EUR a month and the installed image ${current.monthly_fee}: ` +
          'a reinstall keeps the fee; change the order instead.',
      );
    }
  }
  return image;
}

/** The image provisioning installs when none is named: the first enabled one, by id, the plan meets at no fee. */
export async function defaultImage(db: Db, plan: Plan): Promise<OperatingSystemRow | undefined> {
  const images = await listOperatingSystems(db, plan.id);
  return images.find((i) => i.enabled && unmet(i, plan) === null && Number(i.monthly_fee) === 0);
}
