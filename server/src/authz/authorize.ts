// The one check of who may call an operation, run before every handler (http/bind.ts) from what the
// spec declares: `x-callers` (the caller kinds it accepts) and `x-capability` (what a token, an
// application or an acting-as request must hold). It answers the handler's caller with its reach; the
// role table and the reach then decide organization and project access (organization-access.ts).
//
// Service-scoped operations (seed 001 §5: "404 in place of 403 on service-scoped routes") refuse
// nothing here that the handler could answer: a token or a delegation lacking the capability goes on
// with a reach of nowhere, so the handler's own lookup (features/services/access.ts) answers the 404
// of an unknown id, with the same body and after the same query as for an id that does not exist. A
// caller of a kind the operation never accepts gets that same 404 at once.
import { elevationRequired, forbidden, notFound } from '../http/errors.js';
import type { Auth, CallerKind } from '../http/handler.js';
import { findCapability, UNRESTRICTED } from './capabilities.js';
import type { Credential } from './credentials.js';
import { EVERYWHERE, reachOf, type GrantRow, type Reach } from './reach.js';

export interface OperationRule {
  callers: readonly CallerKind[];
  capability: string | null;
  /** A token or an acting-as request needs no capability (`x-capability-free`). */
  capabilityFree: boolean;
  /** Under /admin/: a session must hold a system permission, then be elevated. */
  admin: boolean;
  /** Every refusal is the 404 of an unknown id (`x-service-scoped`, or the path). */
  serviceScoped: boolean;
}

/** What a service-scoped route answers for an id it does not know (features/services/access.ts too). */
export const serviceNotFound = () => notFound('No such service instance.');

/** A reach that reaches nothing: every organization, project and service looks absent. */
const NOWHERE: Reach = { all: false, organizations: new Set(), projects: new Set() };

/** What the gate knows besides the credential. */
export interface GateFacts {
  /** For a session on an /admin/ route: whether the account holds any system permission. */
  staff?: boolean;
}

const KIND_REFUSED: Record<Credential['kind'], string> = {
  session: 'This operation is for registered applications, with their own token.',
  token: 'API tokens may not call this operation; it needs a signed-in session.',
  application: 'An application may not call this operation as itself.',
  acting_as: 'An application acting as a user may not call this operation.',
};

const legacyGrants: GrantRow[] = UNRESTRICTED.map((capability) => ({ capability, scope: { kind: 'all' } }));

export function authorize(rule: OperationRule, credential: Credential, now: Date, facts: GateFacts = {}): Auth {
  if (!rule.callers.includes(credential.kind)) {
    throw rule.serviceScoped ? serviceNotFound() : forbidden(KIND_REFUSED[credential.kind]);
  }
  // On a service-scoped route a user-acting caller that may not act goes on reaching nowhere.
  const refuse = (error: Error): Reach => {
    if (rule.serviceScoped) return NOWHERE;
    throw error;
  };
  switch (credential.kind) {
    case 'session': {
      // One check for every staff route before any handler runs (DECISIONS.md §4): an account holding
      // no system permission learns that it lacks the permission, elevated or not; staff are asked to
      // elevate; the route's own permission comes after, in the handler.
      if (rule.admin) {
        if (!facts.staff) throw forbidden('This is a staff route; your account holds no system permission.');
        if (!(credential.elevatedUntil && credential.elevatedUntil > now)) {
          throw elevationRequired('Staff routes need an elevated session.');
        }
      }
      return { ...credential, reach: EVERYWHERE };
    }
    case 'token': {
      const { capability } = rule;
      const base = { kind: 'token' as const, userId: credential.userId, tokenId: credential.tokenId };
      // Nothing to hold: a reach of nowhere, so the operation touches the caller's own account only.
      if (rule.capabilityFree) return { ...base, reach: NOWHERE };
      const entry = capability === null ? undefined : findCapability(capability);
      // An admin-only grant works only in an admin-authorized token whose owner still holds the staff
      // permission: staff power never flows through a token otherwise.
      if (entry?.systemPermission && !(credential.adminAuthorized && credential.systemPermissions.includes(entry.systemPermission))) {
        return {
          ...base,
          reach: refuse(forbidden(`This needs the ${entry.systemPermission} system permission, through an admin-authorized token.`)),
        };
      }
      const reach = capability === null ? null : reachOf(credential.grants ?? legacyGrants, capability);
      return { ...base, reach: reach ?? refuse(forbidden(`This API token lacks the ${capability} capability.`)) };
    }
    case 'acting_as': {
      const { applicationId, userId, delegationId } = credential;
      if (rule.capabilityFree) return { kind: 'acting_as', applicationId, userId, delegationId, reach: NOWHERE };
      const holds = rule.capability !== null && credential.capabilities.includes(rule.capability);
      const reach = holds ? EVERYWHERE : refuse(lacks('The delegation', rule.capability));
      return { kind: 'acting_as', applicationId, userId, delegationId, reach };
    }
    case 'application': {
      if (rule.capability !== null && !credential.capabilities.includes(rule.capability)) {
        throw rule.serviceScoped ? serviceNotFound() : lacks('This application', rule.capability);
      }
      return { kind: 'application', applicationId: credential.applicationId };
    }
  }
}

const lacks = (holder: string, capability: string | null) =>
  forbidden(`${holder} lacks the ${capability ?? 'needed'} capability.`);

export type { Reach };
