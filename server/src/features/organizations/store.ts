// All SQL of organizations: the caller's organizations, creating, renaming, the billing country, the
// icon pointer, the wallet behind the standing, and deleting (document 1, "Organizations").
import type { OrganizationRow } from '../../authz/organization-access.js';
import type { Role } from '../../authz/roles.js';
import { isUniqueViolation, type Db } from '../../db/client.js';
import { conflict } from '../../http/errors.js';

export interface OrganizationWithRole extends OrganizationRow {
  role: Role;
}

/** Every wallet column as PostgreSQL prints its numeric: money never passes through a JS float. */
export interface WalletRow {
  balance: string;
  reservations: string;
  floor: string;
  credit_limit: string;
  open_receivables: string;
}

const RETURNING = 'id, name, slug, personal_owner_id, billing_country_code, icon_asset_id, created_at';
const COLUMNS = RETURNING.split(', ').map((c) => `o.${c}`).join(', ');
const SLUG_KEY = 'organizations_slug_key';

/**
 * Runs a write that may take a slug. The unique index decides (not a read before the write), so of
 * concurrent writes of one slug exactly one succeeds and the others are 409.
 */
async function takingSlug<T>(slug: string | null, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err, SLUG_KEY)) throw conflict('slug-taken', `The slug "${slug}" is taken.`);
    throw err;
  }
}

/** The caller's organizations: the personal one first, then by name (case-insensitively). */
export async function listForUser(db: Db, userId: string): Promise<OrganizationWithRole[]> {
  return db<OrganizationWithRole[]>`
    select ${db.unsafe(COLUMNS)}, m.role
    from organizations o join organization_members m on m.organization_id = o.id and m.user_id = ${userId}
    order by o.personal_owner_id is null, lower(o.name), o.name, o.id`;
}

/** The organization with this slug when the user belongs to it; undefined when absent or not. */
export async function findBySlugForUser(db: Db, slug: string, userId: string): Promise<OrganizationWithRole | undefined> {
  const [row] = await db<OrganizationWithRole[]>`
    select ${db.unsafe(COLUMNS)}, m.role
    from organizations o join organization_members m on m.organization_id = o.id and m.user_id = ${userId}
    where o.slug = ${slug}`;
  return row;
}

/** A new organization with `ownerId` as its Owner. */
export async function createOrganization(
  db: Db,
  input: { id: string; name: string; slug: string; ownerId: string },
  now: Date,
): Promise<OrganizationRow> {
  const [row] = await takingSlug(
    input.slug,
    () => db<OrganizationRow[]>`
      insert into organizations (id, name, slug, created_at, updated_at)
      values (${input.id}, ${input.name}, ${input.slug}, ${now}, ${now})
      returning ${db.unsafe(RETURNING)}`,
  );
  await db`
    insert into organization_members (organization_id, user_id, role, created_at)
    values (${input.id}, ${input.ownerId}, 'owner', ${now})`;
  return row!;
}

export async function updateOrganization(
  db: Db,
  id: string,
  changes: { name: string; slug: string },
  now: Date,
): Promise<OrganizationRow> {
  const [row] = await takingSlug(
    changes.slug,
    () => db<OrganizationRow[]>`
      update organizations set name = ${changes.name}, slug = ${changes.slug}, updated_at = ${now}
      where id = ${id}
      returning ${db.unsafe(RETURNING)}`,
  );
  return row!;
}

export async function setBillingCountry(db: Db, id: string, code: string, now: Date): Promise<OrganizationRow> {
  const [row] = await db<OrganizationRow[]>`
    update organizations set billing_country_code = ${code}, updated_at = ${now}
    where id = ${id}
    returning ${db.unsafe(RETURNING)}`;
  return row!;
}

/** Points the icon at `assetId` (null removes it). */
export async function setIcon(db: Db, id: string, assetId: string | null, now: Date): Promise<OrganizationRow> {
  const [row] = await db<OrganizationRow[]>`
    update organizations set icon_asset_id = ${assetId}, updated_at = ${now}
    where id = ${id}
    returning ${db.unsafe(RETURNING)}`;
  return row!;
}

export async function countProjects(db: Db, id: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from projects where organization_id = ${id}`;
  return row!.n;
}

/** The wallet, or zeros when none was ever set up. */
export async function findWallet(db: Db, id: string): Promise<WalletRow> {
  const [row] = await db<WalletRow[]>`
    select balance::text, reservations::text, floor::text, credit_limit::text, open_receivables::text
    from organization_wallets where organization_id = ${id}`;
  return row ?? { balance: '0.00', reservations: '0.00', floor: '0.00', credit_limit: '0.00', open_receivables: '0.00' };
}

/** Deletes the organization; its members, wallet and audit entries go with it (on delete cascade). */
export async function deleteOrganization(db: Db, id: string): Promise<void> {
  await db`delete from organizations where id = ${id}`;
}
