// Checking the grants of a token being minted (seed "Personal API tokens and delegations"): each names
// a capability of the catalogue, in a scope its kind allows, over an organization or project the caller
// belongs to; each capability must be one the caller may grant. A refusal names the grant it is about.
import { findCapability, grantableBy, type Capability } from '../../authz/capabilities.js';
import type { GrantRow } from '../../authz/reach.js';
import type { Db } from '../../db/client.js';
import { forbidden, invalidFieldValue } from '../../http/errors.js';
import type { components } from '../../../../generated/api.js';
import { memberScopes } from './store.js';

type GrantRequest = components['schemas']['GrantRequest'];

const at = (i: number, rest: string) => `/authorization/grants/${i}${rest}`;
const refuse = (pointer: string, message: string) =>
  invalidFieldValue(message, [{ location: 'body', pointer, message }]);

export interface CheckedGrants {
  grants: GrantRow[];
  /** The admin-only capabilities among them. */
  adminOnly: Capability[];
}

export async function checkGrants(
  db: Db,
  userId: string,
  systemPermissions: readonly string[],
  requested: readonly GrantRequest[],
): Promise<CheckedGrants> {
  const grants: GrantRow[] = [];
  // Each kept grant's index in the request, for the pointer of a refusal.
  const origin: number[] = [];
  const seen = new Set<string>();
  requested.forEach((g, i) => {
    const capability = findCapability(g.capability);
    if (!capability) throw refuse(at(i, '/capability'), `Unknown capability "${g.capability}"; see GET /me/api-token-capabilities.`);
    if (!capability.scopes.includes(g.scope.kind)) {
      throw refuse(at(i, '/scope/kind'), `${capability.name} is granted with scope ${capability.scopes.join(' or ')}.`);
    }
    if (g.scope.kind === 'all' && g.scope.id !== undefined) throw refuse(at(i, '/scope/id'), 'A scope of kind all takes no id.');
    if (g.scope.kind !== 'all' && g.scope.id === undefined) throw refuse(at(i, '/scope/id'), `A scope of kind ${g.scope.kind} needs an id.`);
    const scope: GrantRow['scope'] =
      g.scope.kind === 'all' ? { kind: 'all' } : { kind: g.scope.kind, id: g.scope.id!.toLowerCase() };
    const key = JSON.stringify([capability.name, scope]);
    if (seen.has(key)) return;
    seen.add(key);
    grants.push({ capability: capability.name, scope });
    origin.push(i);
  });
  await requireMembershipOfScopes(db, userId, grants, origin);
  const grantable = new Set(grantableBy(systemPermissions).map((c) => c.name));
  const refused = grants.find((g) => !grantable.has(g.capability));
  if (refused) throw forbidden(`You may not grant ${refused.capability}: it needs a system permission you do not hold.`);
  const adminOnly = [...new Set(grants.map((g) => g.capability))]
    .map((name) => findCapability(name)!)
    .filter((c) => c.systemPermission !== null);
  return { grants, adminOnly };
}

/** An organization or project the caller is not in answers as one that does not exist. */
async function requireMembershipOfScopes(db: Db, userId: string, grants: GrantRow[], origin: number[]): Promise<void> {
  const ids = (kind: 'organization' | 'project') =>
    grants.flatMap((g) => (g.scope.kind === kind ? [g.scope.id] : []));
  const organizations = ids('organization');
  const projects = ids('project');
  if (organizations.length === 0 && projects.length === 0) return;
  const member = await memberScopes(db, userId, organizations, projects);
  const i = grants.findIndex(
    (g) => g.scope.kind !== 'all' && !(g.scope.kind === 'organization' ? member.organizations : member.projects).has(g.scope.id),
  );
  if (i >= 0) {
    const kind = grants[i]!.scope.kind;
    throw refuse(at(origin[i]!, '/scope/id'), `No such ${kind} among yours.`);
  }
}
