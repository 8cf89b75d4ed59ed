// All SQL of staff provisioning and of the subscription's lifecycle (DECISIONS.md §4 "provisioning",
// "service end").
import { gamePlatformName } from '../../dns/platform-names.js';
import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/client.js';
import { addressSpaceOf, unitAddressCandidates } from '../../substrate/local/address.js';
import type { ProductRow } from '../catalog/store.js';
import type { SubscriptionStatus } from '../services/store.js';
import { stripColourCodes } from '../../games/colour-codes.js';

export interface ProjectRef {
  id: string;
  organization_id: string;
}

/**
 * The project, held for the transaction: provisionings into it go at once (their slugs are decided by its
 * unique index, `insertService`), while a project deletion, which locks the row for update, waits for
 * them and then counts their subscriptions (and a provisioning waits for a deletion, then finds nothing).
 * Its organization is held first: a deletion locks the organization, then the project, and this
 * transaction's audit entry would otherwise wait for the organization while holding the project.
 */
export async function holdProject(db: Db, projectId: string): Promise<ProjectRef | undefined> {
  await db`
    select 1 from organizations where id = (select organization_id from projects where id = ${projectId})
    for key share`;
  const [row] = await db<
    ProjectRef[]
  >`select id, organization_id from projects where id = ${projectId} for key share`;
  return row;
}

/** Colour codes go first: `^1Rocket ^7Arena` is `rocket-arena`, not `1rocket-7arena`. */
function slugBase(name: string): string {
  return (
    stripColourCodes(name)
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40)
      .replace(/-+$/, '') || 'service'
  );
}

/**
 * A slug from the name, free in the project and claimed for this transaction: `my-server`, then
 * `my-server-2`, ... A slug another transaction is claiming (it holds the slug's advisory lock until it
 * ends) is passed over rather than waited for, so provisionings of one name at once each take the next
 * one instead of queueing behind each other's commits. The insert's unique index stays the judge.
 */
async function claimSlug(db: Db, projectId: string, name: string): Promise<string> {
  const base = slugBase(name);
  const taken = new Set(
    (
      await db<{ slug: string }[]>`
      select slug from service_instances where project_id = ${projectId} and (slug = ${base} or slug like ${base + '-%'})`
    ).map((r) => r.slug),
  );
  for (let n = 1; ; n += 1) {
    const slug = n === 1 ? base : `${base}-${n}`;
    if (taken.has(slug)) continue;
    const [claim] = await db<{ claimed: boolean }[]>`
      select pg_try_advisory_xact_lock(hashtext(${`service_slug:${projectId}:${slug}`})) as claimed`;
    if (claim!.claimed) return slug;
  }
}

export interface Provisioned {
  subscriptionId: string;
  serviceId: string;
  unitId: string;
}

/**
 * The subscription (active, for a month from now), its service instance (provisioning), the volume and
 * the machine or workload on it, with the unit's public endpoint.
 */
export async function insertService(
  db: Db,
  input: {
    project: ProjectRef;
    product: ProductRow;
    name: string;
    price: string;
    osImage: string | null;
    /** The platform's DNS zone: the unit's public name is made under it. */
    platformDomain: string;
    /** Where the unit's address comes from (substrate/local/address.ts). */
    substrate: string;
  },
  now: Date,
): Promise<Provisioned> {
  const subscriptionId = randomUUID();
  const serviceId = randomUUID();
  const volumeId = randomUUID();
  const unitId = randomUUID();
  const windowEnd = new Date(now);
  windowEnd.setUTCMonth(windowEnd.getUTCMonth() + 1);
  await db`
    insert into subscriptions (id, project_id, product_id, status, price, currency, window_start, window_end,
                               created_at, updated_at)
    values (${subscriptionId}, ${input.project.id}, ${input.product.id}, 'active', ${input.price}, 'EUR', ${now},
            ${windowEnd}, ${now}, ${now})`;
  let slug: string;
  for (;;) {
    slug = await claimSlug(db, input.project.id, input.name);
    // Taken by a service committed since the slugs were read (renamed to it): the next one.
    const made = await db`
      insert into service_instances (id, project_id, subscription_id, product_id, name, slug, status, created_at, updated_at)
      values (${serviceId}, ${input.project.id}, ${subscriptionId}, ${input.product.id}, ${input.name}, ${slug},
              'provisioning', ${now}, ${now})
      on conflict (project_id, slug) do nothing
      returning 1`;
    if (made.length > 0) break;
  }
  await db`
    insert into service_resources (id, service_instance_id, kind, role, status, size_gb, created_at, updated_at)
    values (${volumeId}, ${serviceId}, 'volume', 'storage', 'provisioning', ${input.product.storage_gb}, ${now}, ${now})`;
  const vps = input.product.kind === 'vps';
  const publicAddress = gamePlatformName(slug, serviceId, input.platformDomain);
  // What the service answers on from outside is the product's (its program's ports), at the unit's name;
  // the unit's own address is the first candidate no other unit of this platform holds.
  await db`
    insert into service_resources (id, service_instance_id, kind, role, status, os_image, volume_id, unit_key,
                                   public_endpoints, address, created_at, updated_at)
    select ${unitId}, ${serviceId}, ${vps ? 'virtual_machine' : 'workload'}, 'primary', 'provisioning',
           ${input.osImage}, ${volumeId}, ${slug.slice(0, 40).replace(/-+$/, '')},
           (select coalesce(jsonb_agg(e || jsonb_build_object('address', ${publicAddress}::text)), '[]'::jsonb)
            from jsonb_array_elements(cp.endpoints) e),
           (select c from unnest(${unitAddressCandidates(unitId, addressSpaceOf(input.substrate))}::inet[]) with ordinality as t (c, n)
            where not exists (select 1 from service_resources r where r.address = t.c)
            order by n limit 1),
           ${now}, ${now}
    from catalog_products cp where cp.id = ${input.product.id}`;
  return { subscriptionId, serviceId, unitId };
}

export interface SubscriptionRow {
  id: string;
  project_id: string;
  product_id: string;
  status: SubscriptionStatus;
  service_instance_id: string;
  organization_id: string;
  created_at: Date;
  updated_at: Date;
}

export async function lockSubscription(db: Db, id: string): Promise<SubscriptionRow | undefined> {
  const [row] = await db<SubscriptionRow[]>`
    select sub.id, sub.project_id, sub.product_id, sub.status, s.id as service_instance_id, p.organization_id,
           sub.created_at, sub.updated_at
    from subscriptions sub
    join service_instances s on s.subscription_id = sub.id
    join projects p on p.id = sub.project_id
    where sub.id = ${id} and sub.deleted_at is null
    for update of sub, s`;
  return row;
}

/** Moves the subscription and its service to `status`; a service still provisioning keeps `provisioning`. */
export async function setSubscriptionStatus(
  db: Db,
  sub: SubscriptionRow,
  status: SubscriptionStatus,
  now: Date,
): Promise<SubscriptionRow> {
  await db`update subscriptions set status = ${status}, updated_at = ${now} where id = ${sub.id}`;
  // A resumed service comes back to what its customer last asked (power on: running, off: stopped).
  await db`
    update service_instances
    set status = case ${status}::text when 'active' then (case power when 'on' then 'running' else 'stopped' end)
                                     else ${status}::text end,
        updated_at = ${now}
    where id = ${sub.service_instance_id}
      and (${status} = 'ended' or status in ('running', 'stopped', 'suspended'))`;
  return { ...sub, status, updated_at: now };
}
