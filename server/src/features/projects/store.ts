// All SQL of projects and their stats (document 1, "Project", "Project stats", "Projects").
import type { Db } from '../../db/client.js';
import { isUniqueViolation } from '../../db/client.js';
import type { Role } from '../../authz/roles.js';

export interface ProjectRow {
  id: string;
  organization_id: string;
  name: string;
  slug: string;
  description: string | null;
  managed: boolean;
  created_at: Date;
  updated_at: Date;
}

/** A project as the caller sees it: with the caller's role and whether its organization is personal. */
export interface ProjectAccess {
  project: ProjectRow;
  role: Role;
  personal: boolean;
}

const PROJECT_COLUMNS =
  'p.id, p.organization_id, p.name, p.slug, p.description, p.managed, p.created_at, p.updated_at';

/** The unique index that decides a slug's owner within an organization, concurrent creates included. */
const SLUG_KEY = 'projects_organization_id_slug_key';

/** The one mapping of a constraint violation: a slug taken within the organization. */
export const isSlugTaken = (err: unknown): boolean => isUniqueViolation(err, SLUG_KEY);

/**
 * The project with the caller's role, or undefined when it is absent or its organization is not the
 * caller's (the two look alike to the caller).
 */
export async function findProjectAccess(
  db: Db,
  projectId: string,
  userId: string,
): Promise<ProjectAccess | undefined> {
  const [row] = await db<(ProjectRow & { role: Role; personal: boolean })[]>`
    select ${db.unsafe(PROJECT_COLUMNS)}, m.role, o.personal_owner_id is not null as personal
    from projects p
    join organizations o on o.id = p.organization_id
    join organization_members m on m.organization_id = p.organization_id and m.user_id = ${userId}
    where p.id = ${projectId}`;
  if (!row) return undefined;
  const { role, personal, ...project } = row;
  return { project, role, personal };
}

/**
 * The project row, locked for the caller's transaction and read fresh: a new subscription (its
 * foreign key takes a share lock on the row) waits until the transaction ends.
 */
export async function lockProject(db: Db, projectId: string): Promise<ProjectRow | undefined> {
  const [row] = await db<ProjectRow[]>`
    select ${db.unsafe(PROJECT_COLUMNS)} from projects p where p.id = ${projectId} for update`;
  return row;
}

/**
 * Every project of every organization the user belongs to: organizations as GET /organizations
 * orders them (the personal one first, then by name), then projects by name.
 */
export async function listProjectsOfUser(db: Db, userId: string): Promise<ProjectRow[]> {
  return db<ProjectRow[]>`
    select ${db.unsafe(PROJECT_COLUMNS)}
    from projects p
    join organizations o on o.id = p.organization_id
    join organization_members m on m.organization_id = p.organization_id and m.user_id = ${userId}
    order by o.personal_owner_id is null, lower(o.name), o.name, o.id, lower(p.name), p.name, p.id`;
}

export async function listProjectsOfOrganization(db: Db, organizationId: string): Promise<ProjectRow[]> {
  return db<ProjectRow[]>`
    select ${db.unsafe(PROJECT_COLUMNS)} from projects p
    where p.organization_id = ${organizationId}
    order by lower(p.name), p.name, p.id`;
}

export async function findProjectBySlug(
  db: Db,
  organizationId: string,
  slug: string,
): Promise<ProjectRow | undefined> {
  const [row] = await db<ProjectRow[]>`
    select ${db.unsafe(PROJECT_COLUMNS)} from projects p
    where p.organization_id = ${organizationId} and p.slug = ${slug}`;
  return row;
}

export interface NewProject {
  id: string;
  organizationId: string;
  name: string;
  slug: string;
  description: string | null;
}

/** Inserts the project; a taken slug throws the unique violation (isSlugTaken), aborting the transaction. */
export async function insertProject(db: Db, p: NewProject, now: Date): Promise<ProjectRow> {
  const [row] = await db<ProjectRow[]>`
    insert into projects as p (id, organization_id, name, slug, description, managed, created_at, updated_at)
    values (${p.id}, ${p.organizationId}, ${p.name}, ${p.slug}, ${p.description}, false, ${now}, ${now})
    returning ${db.unsafe(PROJECT_COLUMNS)}`;
  return row!;
}

export interface ProjectChanges {
  name?: string;
  slug?: string;
  /** Present (null included) sets it; absent leaves it. */
  description?: string | null;
}

/** Applies the changes given; a taken slug throws the unique violation (isSlugTaken). */
export async function updateProject(
  db: Db,
  projectId: string,
  changes: ProjectChanges,
  now: Date,
): Promise<ProjectRow> {
  const setDescription = changes.description !== undefined;
  const [row] = await db<ProjectRow[]>`
    update projects p set
      name = coalesce(${changes.name ?? null}::text, p.name),
      slug = coalesce(${changes.slug ?? null}::text, p.slug),
      description = case when ${setDescription}::boolean then ${changes.description ?? null}::text else p.description end,
      updated_at = ${now}
    where p.id = ${projectId}
    returning ${db.unsafe(PROJECT_COLUMNS)}`;
  return row!;
}

/** Subscriptions not deleted: what "the project holds" means for delete and for resource_count. */
export async function countLiveSubscriptions(db: Db, projectId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from subscriptions where project_id = ${projectId} and deleted_at is null`;
  return row!.n;
}

/**
 * Deletes the project. Its deleted subscriptions go with it: they are tombstones that nothing serves
 * and nothing bills any more, and their foreign key would otherwise keep the project forever. The
 * audit log keeps the history (audit_entries.project_id has no foreign key).
 */
export async function deleteProject(db: Db, projectId: string): Promise<void> {
  await db`delete from subscriptions where project_id = ${projectId} and deleted_at is not null`;
  await db`delete from projects where id = ${projectId}`;
}

export interface ProjectStatsRow {
  organization_id: string;
  project_id: string;
  /** count(*) is a bigint, which postgres.js reads as a string. */
  resource_count: string;
  /** [{ currency, amount }] with amount already a two-place decimal string. */
  cycle_spend: { currency: string; amount: string }[];
}

/**
 * Stats of the user's projects (or of one of them), in ONE statement whatever the number of
 * projects. resource_count counts subscriptions not deleted; cycle_spend sums, per currency, the
 * price of subscriptions not deleted and not ended whose service window [window_start, window_end)
 * contains `now` (the injected clock, never SQL now()). Sums are numeric and leave the database as
 * text: no amount ever passes through a JS float.
 */
export async function listProjectStats(
  db: Db,
  userId: string,
  now: Date,
  options: { projectId?: string } = {},
): Promise<ProjectStatsRow[]> {
  return db<ProjectStatsRow[]>`
    select p.id as project_id, p.organization_id, live.resource_count, coalesce(spend.cycle_spend, '[]'::json) as cycle_spend
    from projects p
    join organizations o on o.id = p.organization_id
    join organization_members m on m.organization_id = p.organization_id and m.user_id = ${userId}
    cross join lateral (
      select count(*) as resource_count
      from subscriptions s
      where s.project_id = p.id and s.deleted_at is null
    ) live
    cross join lateral (
      select json_agg(json_build_object('currency', c.currency, 'amount', c.amount::text) order by c.currency)
               as cycle_spend
      from (
        select s.currency, round(sum(s.price), 2) as amount
        from subscriptions s
        where s.project_id = p.id and s.deleted_at is null and s.status <> 'ended'
          and s.window_start <= ${now} and s.window_end > ${now}
        group by s.currency
      ) c
    ) spend
    ${options.projectId === undefined ? db`` : db`where p.id = ${options.projectId}`}
    order by o.personal_owner_id is null, lower(o.name), o.name, o.id, lower(p.name), p.name, p.id`;
}
