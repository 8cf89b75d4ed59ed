// The one check of who may call an operation, run before every handler (http/bind.ts) from what the
// spec declares: `x-callers` (the caller kinds it accepts) and `x-capability` (what a token, an
// application or an acting-as request must hold). It answers the handler's caller with its reach; the
// role table and the reach then decide organization and project access (organization-access.ts).
import { elevationRequired, forbidden } from '../http/errors.js';
import type { Auth, CallerKind } from '../http/handler.js';
import { findCapability, UNRESTRICTED } from './capabilities.js';
import type { Credential } from './credentials.js';
import { EVERYWHERE, reachOf, type GrantRow, type Reach } from './reach.js';

export interface OperationRule {
  callers: readonly CallerKind[];
  capability: string | null;
  /** Under /admin/: a session must be elevated. */
  admin: boolean;
}

const KIND_REFUSED: Record<Credential['kind'], string> = {
  session: 'This operation is for registered applications, with their own token.',
  token: 'API tokens may not call this operation; it needs a signed-in session.',
  application: 'An application may not call this operation as itself.',
  acting_as: 'An application acting as a user may not call this operation.',
};

const legacyGrants: GrantRow[] = UNRESTRICTED.map((capability) => ({ capability, scope: { kind: 'all' } }));

export function authorize(rule: OperationRule, credential: Credential, now: Date): Auth {
  if (!rule.callers.includes(credential.kind)) throw forbidden(KIND_REFUSED[credential.kind]);
  switch (credential.kind) {
    case 'session': {
      // One check for every staff route before any handler runs; the route's own permission comes after.
      if (rule.admin && !(credential.elevatedUntil && credential.elevatedUntil > now)) {
        throw elevationRequired('Staff routes need an elevated session.');
      }
      return { ...credential, reach: EVERYWHERE };
    }
    case 'token': {
      const { capability } = rule;
      const entry = capability === null ? undefined : findCapability(capability);
      // An admin-only grant works only in an admin-authorized token whose owner still holds the staff
      // permission: staff power never flows through a token otherwise.
      if (entry?.systemPermission && !(credential.adminAuthorized && credential.systemPermissions.includes(entry.systemPermission))) {
        throw forbidden(`This needs the ${entry.systemPermission} system permission, through an admin-authorized token.`);
      }
      const reach = capability === null ? null : reachOf(credential.grants ?? legacyGrants, capability);
      if (!reach) throw forbidden(`This API token lacks the ${capability} capability.`);
      return { kind: 'token', userId: credential.userId, tokenId: credential.tokenId, reach };
    }
    case 'acting_as': {
      requireCapability(credential.capabilities, rule.capability, 'The delegation');
      const { applicationId, userId, delegationId } = credential;
      return { kind: 'acting_as', applicationId, userId, delegationId, reach: EVERYWHERE };
    }
    case 'application': {
      if (rule.capability !== null) requireCapability(credential.capabilities, rule.capability, 'This application');
      return { kind: 'application', applicationId: credential.applicationId };
    }
  }
}

function requireCapability(held: readonly string[], capability: string | null, holder: string): void {
  if (capability === null || !held.includes(capability)) {
    throw forbidden(`${holder} lacks the ${capability ?? 'needed'} capability.`);
  }
}

export type { Reach };
