// The one table of what each organization role may do (document 1, "Membership", "Organizations",
// "Members", "Projects", "Audit and domains"). Every organization-scoped check reads it; the
// authorization issue intersects it with API-token grants.
export const ROLES = ['owner', 'admin', 'billing', 'member'] as const;
export type Role = (typeof ROLES)[number];

export type Permission =
  | 'organization.read'
  | 'organization.manage' // PATCH, billing country, icon ("ManageOrganizationPolicy")
  | 'organization.delete'
  | 'members.read'
  | 'members.manage'
  | 'projects.read'
  | 'projects.manage'
  | 'audit.read'
  | 'domains.read'
  | 'domains.manage' // claim domains and check their proofs
  | 'standing.read'
  | 'standing.detail'
  | 'services.read' // service instances, resources, operations (document 2)
  | 'services.manage' // "changing the service": reinstall and the like; Billing manages money, not servers
  | 'services.share' // per-service shares (DECISIONS.md §4: owner or admin)
  | 'services.game_actions'; // a game's player actions (DECISIONS.md §6 "Access": owner or admin)

const EVERY_MEMBER: Permission[] = [
  'organization.read',
  'members.read',
  'projects.read',
  'standing.read',
  'domains.read',
  'services.read',
];

export const ROLE_PERMISSIONS: Readonly<Record<Role, ReadonlySet<Permission>>> = {
  owner: new Set<Permission>([
    ...EVERY_MEMBER,
    'organization.manage',
    'organization.delete',
    'members.manage',
    'projects.manage',
    'audit.read',
    'standing.detail',
    'domains.manage',
    'services.manage',
    'services.share',
    'services.game_actions',
  ]),
  admin: new Set<Permission>([
    ...EVERY_MEMBER,
    'organization.manage',
    'members.manage',
    'projects.manage',
    'audit.read',
    'domains.manage',
    'services.manage',
    'services.share',
    'services.game_actions',
  ]),
  billing: new Set<Permission>(EVERY_MEMBER),
  member: new Set<Permission>([...EVERY_MEMBER, 'services.manage']),
};

/** owner > admin > billing > member: "a member whose role is above the caller's" compares these. */
const RANK: Record<Role, number> = { owner: 4, admin: 3, billing: 2, member: 1 };

export const can = (role: Role, permission: Permission): boolean => ROLE_PERMISSIONS[role].has(permission);
export const outranks = (a: Role, b: Role): boolean => RANK[a] > RANK[b];
