// The names the platform gives services in its own zone (DECISIONS.md §6 "DNS and domains"): a game
// service's `<slug>-<first 8 hex of its id>.<PLATFORM_DOMAIN>`, a web service's same label under
// `apps.`. One function, used where a name is written (provisioning's public endpoints) and where it is
// served (the platform DNS), so the two never disagree.

/** The slug's first 40 characters (a DNS label has at most 63) without trailing hyphens, and the id's first 8 hex. */
export const platformLabel = (slug: string, serviceId: string): string =>
  `${slug.slice(0, 40).replace(/-+$/, '')}-${serviceId.slice(0, 8).toLowerCase()}`;

export const gamePlatformName = (slug: string, serviceId: string, platformDomain: string): string =>
  `${platformLabel(slug, serviceId)}.${platformDomain}`;

export const webPlatformHost = (slug: string, serviceId: string, platformDomain: string): string =>
  `${platformLabel(slug, serviceId)}.apps.${platformDomain}`;
