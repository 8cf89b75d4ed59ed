// The capability catalogue (DECISIONS.md §3): every capability a personal API token, a delegation or
// an application may hold, one per `x-capability` the spec names. `GET /me/api-token-capabilities`
// serves it; test/authz/declarations.test.ts checks that every operation's capability is here and every
// entry here guards an operation (or is one the seeds name for a later area).
import type { SystemPermission } from './system-permissions.js';

export type ScopeKind = 'all' | 'organization' | 'project';

export interface Capability {
  name: string;
  description: string;
  /**
   * Staff power: granted only by a user holding `systemPermission`, only to an admin-authorized token
   * minted in an elevated session; never delegated. Its effect also needs that permission at the time
   * of each request, so a revoked staff member's tokens lose it at once.
   */
  systemPermission: SystemPermission | null;
  /** The scope kinds a grant may take: account-wide capabilities only `all`. */
  scopes: readonly ScopeKind[];
}

const ACCOUNT: readonly ScopeKind[] = ['all'];
const ORGANIZATION: readonly ScopeKind[] = ['all', 'organization'];
const PROJECT: readonly ScopeKind[] = ['all', 'organization', 'project'];

export const CAPABILITIES: readonly Capability[] = [
  // GET /me needs no capability (DECISIONS.md §7): me.read guards the discovery ledger, and tokens that
  // hold it for GET /me keep working.
  { name: 'me.read', description: 'Read your discovery ledger (GET /me needs no capability).', systemPermission: null, scopes: ACCOUNT },
  {
    name: 'me.manage',
    description: 'Change your profile, avatar, onboarding and discovery ledger.',
    systemPermission: null,
    scopes: ACCOUNT,
  },
  { name: 'assets.read', description: 'Read assets: avatars, icons and your organizations\' files.', systemPermission: null, scopes: ACCOUNT },
  {
    name: 'user_api_tokens.list',
    description: 'List your API tokens and the capabilities you may grant.',
    systemPermission: null,
    scopes: ACCOUNT,
  },
  {
    name: 'organizations.read',
    description: 'Read organizations, their members, standing and claimed domains.',
    systemPermission: null,
    scopes: ORGANIZATION,
  },
  {
    name: 'organizations.manage',
    description: 'Create organizations; rename them, set their billing country and icon; claim and check domains.',
    systemPermission: null,
    scopes: ORGANIZATION,
  },
  { name: 'members.manage', description: 'Add, change and remove organization members.', systemPermission: null, scopes: ORGANIZATION },
  { name: 'audit.read', description: "Read organizations' audit logs.", systemPermission: null, scopes: ORGANIZATION },
  { name: 'projects.read', description: 'Read projects and their statistics.', systemPermission: null, scopes: PROJECT },
  { name: 'projects.manage', description: 'Create, change and delete projects.', systemPermission: null, scopes: PROJECT },
  { name: 'orders.manage', description: 'Place and manage orders (subscriptions) and change services (reinstall).', systemPermission: null, scopes: PROJECT },
  { name: 'services.read', description: 'Read service instances, their resources and operations.', systemPermission: null, scopes: PROJECT },
  {
    name: 'users.read.public',
    description: "Applications: read users' public profiles (never an email).",
    systemPermission: 'manage_applications',
    scopes: ACCOUNT,
  },
  {
    name: 'users.lookup.oauth',
    description: 'Applications: find the user who linked a provider account.',
    systemPermission: 'manage_applications',
    scopes: ACCOUNT,
  },
  {
    name: 'admin.users.manage',
    description: "Staff: set users' system permissions.",
    systemPermission: 'manage_users',
    scopes: ACCOUNT,
  },
  {
    name: 'admin.applications.manage',
    description: 'Staff: register applications and rotate their tokens.',
    systemPermission: 'manage_applications',
    scopes: ACCOUNT,
  },
  {
    name: 'admin.public_content.manage',
    description: 'Staff: public incidents, maintenance windows, resellers and captcha configurations.',
    systemPermission: 'manage_public_content',
    scopes: ACCOUNT,
  },
  {
    name: 'admin.billing.manage',
    description: "Staff: set organizations' wallets (their standing).",
    systemPermission: 'manage_billing',
    scopes: ACCOUNT,
  },
  {
    name: 'admin.services.manage',
    description: 'Staff: provision subscriptions, suspend, resume and end them.',
    systemPermission: 'manage_services',
    scopes: ACCOUNT,
  },
];

const BY_NAME = new Map(CAPABILITIES.map((c) => [c.name, c]));

export const findCapability = (name: string): Capability | undefined => BY_NAME.get(name);
export const isAdminOnly = (c: Capability): boolean => c.systemPermission !== null;

/** What a legacy unrestricted token may do: every capability that carries no staff power, everywhere. */
export const UNRESTRICTED = CAPABILITIES.filter((c) => !isAdminOnly(c)).map((c) => c.name);

/** The entries a user holding `systemPermissions` may grant, in catalogue order. */
export function grantableBy(systemPermissions: readonly string[]): Capability[] {
  return CAPABILITIES.filter((c) => c.systemPermission === null || systemPermissions.includes(c.systemPermission));
}
