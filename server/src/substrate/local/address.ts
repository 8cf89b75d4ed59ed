// Each unit has an address of its own (DECISIONS.md §6 "Network"), so two games can both use their game
// port and the edge can tell units apart. The address is derived from the unit's id, not counted from a
// database sequence: every control plane on this machine (several databases in tests, a second
// DATA_DIR) then agrees without talking, and a /10 holds 4 million of them. The platform records the
// address it chose (service_resources.address) and skips a candidate another of its units holds, so
// within one database no two units share one.
//
// Where the address lives depends on the substrate: a local unit has a network namespace of its own
// (sandbox/network.ts) holding its address in RFC 6598's 100.64.0.0/10, routed to it by the host; an LXD
// unit is reached through proxy devices listening on the member's loopback, so its address is in
// 127.64.0.0/10.
import { createHash } from 'node:crypto';

export type AddressSpace = 'unit-network' | 'loopback';

/** The n-th candidate address of a unit: a /10 of its space, never .0 or .255 in the last octet. */
export function unitAddressCandidate(unitId: string, n = 0, space: AddressSpace = 'unit-network'): string {
  const digest = createHash('sha256').update(`${unitId}/${n}`).digest();
  const value = digest.readUInt32BE(0) % (64 * 256 * 254);
  const second = 64 + Math.floor(value / (256 * 254));
  const third = Math.floor(value / 254) % 256;
  const fourth = 1 + (value % 254);
  return `${space === 'loopback' ? 127 : 100}.${second}.${third}.${fourth}`;
}

/** The first candidates, in order (the store takes the first one no other unit holds). */
export function unitAddressCandidates(unitId: string, space: AddressSpace, count = 8): string[] {
  return Array.from({ length: count }, (_, n) => unitAddressCandidate(unitId, n, space));
}

/** The address space of a substrate's units. */
export function addressSpaceOf(substrate: string): AddressSpace {
  return substrate === 'local' ? 'unit-network' : 'loopback';
}
