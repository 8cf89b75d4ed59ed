// Who may put a host name on a service's HTTP ingress: the one three-way authorization that custom
// domains and allocation HTTP domains share (document 2 §4 "Custom domains": "Authorized before
// persisting: a name in the platform's DNS zone is refused permanently; a single label under a
// staff-registered parent domain is allowed if no other organization holds it; anything else needs
// proven domain control ... A name held by another organization gets the same refusal as an unproven
// domain"; "Configure HTTP domain: ... Same three-way name authorization as custom domains").
//
// The verdict is computed from what is stored; the row in `http_names` (migration 0030, unique by
// hostname) is the claim itself, so a route inserts it with `on conflict do nothing` and a loser of a
// race reads `taken` on its next look.
import type { Db } from '../../db/client.js';
import { holderOfName } from './authorization.js';
import { isWithin } from './names.js';

export type HttpNameVerdict =
  /** May be attached to this service. */
  | { status: 'available'; hostname: string }
  /** Already on this service: attaching again changes nothing (the seed's "idempotent"). */
  | { status: 'attached'; hostname: string; id: string; kind: 'custom_domain' | 'http_domain' }
  /** Held by another service of the same organization. */
  | { status: 'taken'; hostname: string }
  | { status: 'invalid'; reason: string }
  /** In PLATFORM_DOMAIN, or a parent domain's apex or a name deeper than one label under it. */
  | { status: 'platform_zone'; hostname: string }
  /** No proof of control by this organization, or another organization holds it: one answer for both. */
  | { status: 'not_verified'; hostname: string };

const LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/**
 * The seed's rules for an attached name: trimmed, lowercased, one trailing dot removed; refused if
 * empty, over 253 characters, an IP literal, a single label, or with a label empty, over 63 characters,
 * hyphen-terminated, or outside [a-z0-9-]. No IDNA mapping: a name arrives in A-labels.
 */
export function parseHttpHostname(input: string): { ok: true; hostname: string } | { ok: false; reason: string } {
  let name = input.trim().toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name === '') return { ok: false, reason: 'The host name is empty.' };
  if (name.length > 253) return { ok: false, reason: 'A host name has at most 253 characters.' };
  if (/^[\d.]+$/.test(name) || name.includes(':')) {
    return { ok: false, reason: 'An IP address is not a host name.' };
  }
  const labels = name.split('.');
  if (labels.length < 2) return { ok: false, reason: 'A single label is not a host name; give the full name.' };
  for (const label of labels) {
    if (label === '') return { ok: false, reason: 'A host name has no empty label.' };
    if (label.length > 63) return { ok: false, reason: 'Every label of a host name has at most 63 characters.' };
    if (!LABEL.test(label)) {
      return {
        ok: false,
        reason: 'A label holds only a-z, 0-9 and hyphens, and neither starts nor ends with a hyphen.',
      };
    }
  }
  return { ok: true, hostname: name };
}

interface HeldName {
  id: string;
  service_instance_id: string;
  organization_id: string;
  kind: 'custom_domain' | 'http_domain';
}

/**
 * The verdict on `input` for a service of `organizationId`. `parentDomains` are staff's parent domains
 * (names only); `platformDomain` is PLATFORM_DOMAIN. Reads only; the caller inserts the claim row.
 */
export async function authorizeHttpName(
  db: Db,
  input: {
    organizationId: string;
    serviceId: string;
    hostname: string;
    platformDomain: string;
    parentDomains: readonly string[];
    now: Date;
  },
): Promise<HttpNameVerdict> {
  const parsed = parseHttpHostname(input.hostname);
  if (!parsed.ok) return { status: 'invalid', reason: parsed.reason };
  const hostname = parsed.hostname;
  if (isWithin(hostname, input.platformDomain)) return { status: 'platform_zone', hostname };
  const organizationId = input.organizationId.toLowerCase();

  const [held] = await db<HeldName[]>`
    select id, service_instance_id, organization_id, kind from http_names where hostname = ${hostname}`;
  const heldVerdict = (): HttpNameVerdict | null => {
    if (!held) return null;
    if (held.service_instance_id === input.serviceId) {
      return { status: 'attached', hostname, id: held.id, kind: held.kind };
    }
    return held.organization_id === organizationId ? { status: 'taken', hostname } : { status: 'not_verified', hostname };
  };

  const parent = input.parentDomains.find((p) => isWithin(hostname, p));
  if (parent !== undefined) {
    // The platform serves the parent zone: only a single label directly under it can be given out.
    const label = hostname.slice(0, -(parent.length + 1));
    if (hostname === parent || label.includes('.')) return { status: 'platform_zone', hostname };
    const verdict = heldVerdict();
    if (verdict) return verdict;
    // A game subdomain holds the same name in the same zone.
    const [game] = await db<{ organization_id: string }[]>`
      select p.organization_id
      from game_subdomains g
        join parent_domains z on z.id = g.parent_domain_id
        join service_instances s on s.id = g.service_instance_id
        join projects p on p.id = s.project_id
      where z.name = ${parent} and g.subdomain = ${label}`;
    if (game) return game.organization_id === organizationId ? { status: 'taken', hostname } : { status: 'not_verified', hostname };
    return { status: 'available', hostname };
  }

  const holder = await holderOfName(db, hostname, input.now, [input.platformDomain, ...input.parentDomains]);
  if (holder !== organizationId) return { status: 'not_verified', hostname };
  return heldVerdict() ?? { status: 'available', hostname };
}
