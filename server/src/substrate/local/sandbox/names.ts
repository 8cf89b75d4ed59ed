// Names a local unit's confinement is known by on this host. Derived from the unit's id alone, so every
// process (the agent, the gateway's shells, the edge, the usage sampler) finds the same ones without asking.
import { createHash } from 'node:crypto';

/** The host side of the unit's veth pair (interface names are at most 15 bytes). */
export function unitVethName(unitId: string): string {
  return 'svh' + createHash('sha256').update(unitId).digest('hex').slice(0, 12);
}

/** The unit's network namespace, kept by `ip netns` as /run/netns/<name>. */
export function unitNetnsName(unitId: string): string {
  return `svc-${unitId}`;
}

export const NETNS_DIR = '/run/netns';

export function unitNetnsPath(unitId: string): string {
  return `${NETNS_DIR}/${unitNetnsName(unitId)}`;
}

/** The address every unit sees its host at (the gateway of its only route); the host holds it on each veth. */
export const UNIT_GATEWAY = '169.254.1.1';
