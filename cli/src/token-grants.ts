// `--grant CAPABILITY[:SCOPE]` of `svcctl tokens create` → one grant of the token's authorization
// (DECISIONS.md §3: `{ capability, scope: { kind: all | organization | project, id? } }`):
//
//   projects.read                         scope all (the default)
//   projects.read:all                     the same, spelled out
//   projects.read:organization=UUID       one organization (org=UUID for short)
//   projects.read:project=UUID            one project
//
// Only the spelling is checked here; whether the capability exists, takes that scope kind and names
// an organization or project of yours is the server's to say (with the grant's index in its pointer).
import type { components } from '@svcplatform/sdk';

export type GrantRequest = components['schemas']['GrantRequest'];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const KINDS: Readonly<Record<string, 'organization' | 'project'>> = {
  organization: 'organization',
  org: 'organization',
  project: 'project',
};

export const GRANT_SYNTAX = 'CAPABILITY[:all|:organization=ID|:project=ID]';

/** One `--grant` value; throws an Error whose message says what is wrong with it. */
export function parseGrant(text: string): GrantRequest {
  const colon = text.indexOf(':');
  const capability = (colon === -1 ? text : text.slice(0, colon)).trim();
  if (capability === '') throw new Error(`expected ${GRANT_SYNTAX}: the capability is missing`);
  if (/\s/.test(capability)) throw new Error(`a capability has no spaces: "${capability}"`);
  if (colon === -1) return { capability, scope: { kind: 'all' } };
  const scope = text.slice(colon + 1).trim();
  if (scope === 'all') return { capability, scope: { kind: 'all' } };
  const eq = scope.indexOf('=');
  const kind = eq === -1 ? undefined : KINDS[scope.slice(0, eq).trim()];
  if (kind === undefined) {
    throw new Error(`the scope "${scope}" is not all, organization=ID or project=ID`);
  }
  const id = scope.slice(eq + 1).trim();
  if (!UUID.test(id)) throw new Error(`${kind}= takes the ${kind}'s id (a uuid); got "${id}"`);
  return { capability, scope: { kind, id } };
}

/** The repeatable option's accumulator: each `--grant` adds one. */
export function accumulateGrant(raw: string, previous: unknown): GrantRequest[] {
  return [...(Array.isArray(previous) ? (previous as GrantRequest[]) : []), parseGrant(raw)];
}

/** `projects.read` (scope all), `projects.read:project=ID`: the grant as it would be typed. */
export function formatGrant(grant: { capability: string; scope: { kind: string; id?: string } }): string {
  const { kind, id } = grant.scope;
  return kind === 'all' ? grant.capability : `${grant.capability}:${kind}=${id ?? ''}`;
}
