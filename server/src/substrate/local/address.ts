// Each unit of the local substrate listens on a loopback address of its own (DECISIONS.md §6 "Network"),
// so two games can both use their game port and the edge can tell units apart. The address is derived
// from the unit's id, not counted from a database sequence: every control plane on this machine (several
// databases in tests, a second DATA_DIR) then agrees without talking, and 127.64.0.0/10 holds 4 million of
// them. The platform records the address it chose (service_resources.address) and skips a candidate
// another of its units holds, so within one database no two units share one.
import { createHash } from 'node:crypto';

/** The n-th candidate address of a unit: 127.64.0.0/10, never .0 or .255 in the last octet. */
export function unitAddressCandidate(unitId: string, n = 0): string {
  const digest = createHash('sha256').update(`${unitId}/${n}`).digest();
  const value = digest.readUInt32BE(0) % (64 * 256 * 254);
  const second = 64 + Math.floor(value / (256 * 254));
  const third = Math.floor(value / 254) % 256;
  const fourth = 1 + (value % 254);
  return `127.${second}.${third}.${fourth}`;
}

/** The first candidates, in order (the store takes the first one no other unit holds). */
export function unitAddressCandidates(unitId: string, count = 8): string[] {
  return Array.from({ length: count }, (_, n) => unitAddressCandidate(unitId, n));
}
