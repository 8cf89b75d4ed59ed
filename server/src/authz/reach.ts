// Where a caller may act for one operation: everywhere its user may (a session, an acting-as request,
// a grant scoped `all`), or only in the organizations and projects its token's grants of the
// operation's capability name. The access helpers (organization-access.ts, projects/access.ts) read
// it alongside the role table, so the effective permission is the role's intersected with the grants,
// and something out of reach answers the same 404 as something absent.
export type Reach =
  | { readonly all: true }
  | { readonly all: false; readonly organizations: ReadonlySet<string>; readonly projects: ReadonlySet<string> };

export const EVERYWHERE: Reach = { all: true };

export interface GrantRow {
  capability: string;
  scope: { kind: 'all' } | { kind: 'organization' | 'project'; id: string };
}

/** The reach of `capability` among `grants`; null when no grant names it. */
export function reachOf(grants: readonly GrantRow[], capability: string): Reach | null {
  const organizations = new Set<string>();
  const projects = new Set<string>();
  let named = false;
  for (const g of grants) {
    if (g.capability !== capability) continue;
    named = true;
    if (g.scope.kind === 'all') return EVERYWHERE;
    (g.scope.kind === 'organization' ? organizations : projects).add(g.scope.id);
  }
  return named ? { all: false, organizations, projects } : null;
}

/** Whether an organization-level action in `organizationId` is in reach (a project grant is not enough). */
export const reachesOrganization = (reach: Reach, organizationId: string): boolean =>
  reach.all || reach.organizations.has(organizationId);

/** Whether an action on one project is in reach: its own grant, or its organization's. */
export const reachesProject = (reach: Reach, organizationId: string, projectId: string): boolean =>
  reach.all || reach.organizations.has(organizationId) || reach.projects.has(projectId);
