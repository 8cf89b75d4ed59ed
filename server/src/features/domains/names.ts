// Domain names as claims take them (document 1, "Audit and domains": "normalized lowercase without
// trailing root dot"; issue 11: IDNA A-labels; DECISIONS §7: any host name that is not a public suffix,
// not an IP literal and in no zone the platform serves). Pure functions; the handlers turn a refusal into
// 400 invalid-field-value.
//
// A claim may be of any host name a team controls: `example.com`, or `shop.bigcorp.com` when only that
// is theirs. Its proof covers every name under it; who may serve a name is decided by the most specific
// claim that counts (authorization.ts). Private suffixes of the Public Suffix List count as public
// suffixes: `github.io` names belong to separate parties, and no one claims `github.io` itself.
import { domainToASCII } from 'node:url';
import { parse } from 'tldts';

/** RFC 1035 §2.3.4: 253 characters without the root dot, 63 per label. */
const MAX_NAME = 253;
const MAX_LABEL = 63;
/** Letters, digits and hyphens, not at either end (RFC 1123 §2.1), after IDNA mapping. */
const LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;

/** Where the proof goes: an underscore name, which no host name can take (RFC 8552). */
export const CHALLENGE_LABEL = '_svc-challenge';
export const recordNameOf = (domain: string): string => `${CHALLENGE_LABEL}.${domain}`;

export type Parsed = { ok: true; hostname: string; registrable: string } | { ok: false; reason: string };

/**
 * A host name in A-labels with its registrable domain, or why it is not one. ASCII input may hold only
 * letters, digits, hyphens and dots (URL syntax such as `/`, `:`, `%` or `@`, which the WHATWG host
 * parser would otherwise quietly strip or decode, is refused); non-ASCII letters are IDNA-mapped.
 */
export function parseHostname(input: string): Parsed {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u002c\u002f\u003a-\u0040\u005b-\u0060\u007b-\u007f]/.test(input)) {
    return { ok: false, reason: 'Only letters, digits, hyphens and dots may appear in a domain name.' };
  }
  // One trailing root dot is allowed and dropped (`example.com.` is `example.com`), after IDNA mapping
  // (which turns an ideographic full stop into a dot).
  const mapped = input === '' ? '' : domainToASCII(input);
  const ascii = mapped.endsWith('.') ? mapped.slice(0, -1) : mapped;
  if (ascii === '') return { ok: false, reason: 'This is not a valid domain name (IDNA).' };
  if (ascii.length > MAX_NAME) {
    return { ok: false, reason: `A domain name has at most ${MAX_NAME} characters in A-labels.` };
  }
  const labels = ascii.split('.');
  if (labels.some((l) => l.length === 0 || l.length > MAX_LABEL)) {
    return { ok: false, reason: `Every label of a domain name has 1 to ${MAX_LABEL} characters.` };
  }
  if (!labels.every((l) => LABEL.test(l))) {
    return {
      ok: false,
      reason: 'A label holds letters, digits and hyphens, and neither starts nor ends with a hyphen.',
    };
  }
  const info = parse(ascii, { allowPrivateDomains: true });
  if (info.isIp) return { ok: false, reason: 'An IP address cannot be claimed; claim a domain name.' };
  // A name under no suffix of the Public Suffix List (`.local`, `.internal`, an unknown TLD) has no
  // owner anyone could prove in public DNS.
  if (!info.isIcann && !info.isPrivate) {
    return { ok: false, reason: 'This name is not under a known public suffix.' };
  }
  if (info.domain === null || info.domain === '') {
    return {
      ok: false,
      reason: `${ascii} is a public suffix, which no one can claim; claim a domain under it.`,
    };
  }
  return { ok: true, hostname: ascii, registrable: info.domain };
}

/** True when `hostname` is `zone` or a name under it (both in A-labels, lowercase). */
export const isWithin = (hostname: string, zone: string): boolean =>
  hostname === zone || hostname.endsWith(`.${zone}`);

/**
 * The domain a claim of `input` is of, or why it cannot be claimed. `platformZones` are the zones the
 * platform itself serves (PLATFORM_DOMAIN): their names are the platform's to give, never a claim's.
 */
export function claimableDomain(
  input: string,
  platformZones: readonly string[] = [],
): { ok: true; domain: string } | { ok: false; reason: string } {
  const parsed = parseHostname(input);
  if (!parsed.ok) return parsed;
  const zone = platformZones.find((z) => isWithin(parsed.hostname, z));
  if (zone !== undefined) {
    return { ok: false, reason: `${parsed.hostname} is in ${zone}, a zone the platform serves; it cannot be claimed.` };
  }
  return { ok: true, domain: parsed.hostname };
}

/**
 * The names whose claims could cover `hostname`, most specific first: the name itself and each parent
 * down to its registrable domain (a public suffix is never claimed, so the walk stops there).
 */
export function coveringNames(hostname: string, registrable: string): string[] {
  const names: string[] = [];
  for (let name = hostname; ; name = name.slice(name.indexOf('.') + 1)) {
    names.push(name);
    if (name === registrable || !name.includes('.')) return names;
  }
}
