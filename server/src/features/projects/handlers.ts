// Projects (document 1, "Project", "Projects"): every organization's projects, the personal
// organization's managed `games` project, and who may change what.
import { randomUUID } from 'node:crypto';
import { actorOf, recordAudit } from '../../audit/record.js';
import { organizationNotFound, requireMembership } from '../../authz/organization-access.js';
import { reachesOrganization, reachesProject } from '../../authz/reach.js';
import { conflict, unprocessable } from '../../http/errors.js';
import type { Db } from '../../db/client.js';
import type { AreaHandlers, RequestContext, UserAuth } from '../../http/handler.js';
import { displayName } from '../organizations/names.js';
import { GAMES_SLUG } from '../organizations/personal.js';
import {
  projectGamingManaged,
  projectNotFound,
  projectSlugReserved,
  readableProject,
  writableProject,
} from './access.js';
import { toProject } from './mappers.js';
import { projectStatsHandlers } from './stats.js';
import * as store from './store.js';

const slugTaken = (slug: string) =>
  conflict('slug-taken', `The organization already has a project with the slug "${slug}".`);

/** Rethrows a taken slug as 409 `slug-taken`: the unique index decides, so concurrent writes make one. */
const orSlugTaken =
  (slug: string) =>
  (err: unknown): never => {
    throw store.isSlugTaken(err) ? slugTaken(slug) : err;
  };

const inReach = (auth: UserAuth, p: { id: string; organization_id: string }) =>
  reachesProject(auth.reach, p.organization_id, p.id);

/**
 * An organization-level read of projects: a token granted only some of its projects may make it, and
 * sees those; one with no grant there sees the organization's 404.
 */
const withProjectReach = (auth: UserAuth, organizationId: string): UserAuth =>
  !reachesOrganization(auth.reach, organizationId) && !auth.reach.all && auth.reach.projects.size > 0
    ? { ...auth, reach: { all: false, organizations: new Set([organizationId]), projects: new Set() } }
    : auth;

async function organizationProjectsInReach(db: Db, organizationId: string, auth: UserAuth) {
  await requireMembership(db, organizationId, withProjectReach(auth, organizationId), 'projects.read');
  const rows = (await store.listProjectsOfOrganization(db, organizationId)).filter((r) => inReach(auth, r));
  if (rows.length === 0 && !reachesOrganization(auth.reach, organizationId)) throw organizationNotFound();
  return rows;
}

/** The project's audit entry, in the write's transaction. */
function auditProject(
  tx: Db,
  ctx: RequestContext,
  auth: UserAuth,
  project: { id: string; organization_id: string },
  action: 'project.created' | 'project.updated' | 'project.deleted',
): Promise<void> {
  return recordAudit(
    tx,
    ctx,
    actorOf(auth),
    {
      organizationId: project.organization_id,
      action,
      target: { type: 'project', id: project.id },
      projectId: project.id,
    },
  );
}

export const projectHandlers: AreaHandlers<
  | 'projectList'
  | 'organizationProjectList'
  | 'projectCreate'
  | 'projectGetBySlug'
  | 'projectGet'
  | 'projectUpdate'
  | 'projectDelete'
  | 'projectStatsList'
  | 'projectStatsGet'
> = {
  // Every role holds `projects.read`: membership (the join) and the caller's reach are the whole check.
  async projectList({ auth, ctx }) {
    const rows = await store.listProjectsOfUser(ctx.sql, auth.userId);
    return { status: 200, body: rows.filter((r) => inReach(auth, r)).map(toProject) };
  },

  async organizationProjectList({ path, auth, ctx }) {
    const rows = await organizationProjectsInReach(ctx.sql, path.id, auth);
    return { status: 200, body: rows.map(toProject) };
  },

  async projectCreate({ path, body, auth, ctx }) {
    const name = displayName(body.name);
    const project = await ctx.sql.begin(async (tx) => {
      // Locked like every membership change and the organization's delete: the role is the current
      // one, and a project never lands in an organization being deleted.
      const { organization } = await requireMembership(tx, path.id, auth, 'projects.manage', {
        lock: true,
      });
      if (organization.personal_owner_id !== null && body.slug === GAMES_SLUG)
        throw projectSlugReserved(body.slug);
      const row = await store
        .insertProject(
          tx,
          {
            id: randomUUID(),
            organizationId: organization.id,
            name,
            slug: body.slug,
            description: body.description ?? null,
          },
          ctx.clock.now(),
        )
        .catch(orSlugTaken(body.slug));
      await auditProject(
        tx,
        ctx,
        auth,
        { id: row.id, organization_id: organization.id },
        'project.created',
      );
      return row;
    });
    return { status: 201, body: toProject(project) };
  },

  async projectGetBySlug({ path, auth, ctx }) {
    await requireMembership(ctx.sql, path.id, withProjectReach(auth, path.id), 'projects.read');
    const row = await store.findProjectBySlug(ctx.sql, path.id, path.slug);
    if (!row || !inReach(auth, row)) throw projectNotFound();
    return { status: 200, body: toProject(row) };
  },

  async projectGet({ path, auth, ctx }) {
    const { project } = await readableProject(ctx.sql, path.id, auth, 'projects.read');
    return { status: 200, body: toProject(project) };
  },

  async projectUpdate({ path, body, auth, ctx }) {
    const asked: store.ProjectChanges = {};
    if (body.name !== undefined) asked.name = displayName(body.name);
    if (body.slug !== undefined) asked.slug = body.slug;
    if (body.description !== undefined) asked.description = body.description;
    const project = await ctx.sql.begin(async (tx) => {
      const { project: current, personal } = await writableProject(tx, path.id, auth,
        'projects.manage',
      );
      // After membership, so a non-member still sees 404.
      if (current.managed) throw projectGamingManaged();
      if (personal && asked.slug === GAMES_SLUG) throw projectSlugReserved(asked.slug);
      // Only what differs is written: a PATCH that changes nothing moves no timestamp and records nothing.
      const changes = Object.fromEntries(
        Object.entries(asked).filter(([key, value]) => current[key as keyof store.ProjectChanges] !== value),
      ) as store.ProjectChanges;
      if (Object.keys(changes).length === 0) return current;
      const row = await store
        .updateProject(tx, current.id, changes, ctx.clock.now())
        .catch(orSlugTaken(asked.slug ?? ''));
      await auditProject(
        tx,
        ctx,
        auth,
        { id: current.id, organization_id: current.organization_id },
        'project.updated',
      );
      return row;
    });
    return { status: 200, body: toProject(project) };
  },

  async projectDelete({ path, auth, ctx }) {
    await ctx.sql.begin(async (tx) => {
      // The project's lock keeps a new subscription out until this transaction ends (store.lockProject).
      const { project } = await writableProject(tx, path.id, auth, 'projects.manage');
      if (project.managed) throw projectGamingManaged();
      const live = await store.countLiveSubscriptions(tx, project.id);
      if (live > 0) {
        throw unprocessable(
          'project-has-subscriptions',
          `The project still holds ${live} subscription${live === 1 ? '' : 's'}; a project is deleted once it holds none.`,
        );
      }
      await store.deleteProject(tx, project.id);
      await auditProject(
        tx,
        ctx,
        auth,
        { id: project.id, organization_id: project.organization_id },
        'project.deleted',
      );
    });
    return { status: 204 };
  },

  ...projectStatsHandlers,
};
