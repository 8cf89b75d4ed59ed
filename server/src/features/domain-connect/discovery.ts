// Domain Connect discovery (the Domain Connect spec, "Discovery"): `_domainconnect.<domain>` TXT names
// the DNS provider's API host; `GET {host}/v2/{domain}/settings` answers the provider's settings, of
// which the platform keeps the id, its display name, `urlSyncUX` (where the customer applies a template:
// required, the platform uses the synchronous flow only) and `urlAPI` (where templates are looked up).
import type { Config } from '../../config.js';
import { lookupTxt } from '../../dns/resolver.js';
import { providerBase, providerGet } from './provider-http.js';

export interface ProviderSettings {
  providerId: string;
  displayName: string;
  urlSyncUX: URL;
  urlAPI: URL | null;
}

export type DiscoveryRefusal =
  | 'no_discovery_record'
  | 'provider_address_refused'
  | 'provider_unreachable'
  | 'invalid_settings'
  | 'no_synchronous_flow';

export type Discovery =
  { ok: true; settings: ProviderSettings } | { ok: false; reason: DiscoveryRefusal; detail: string };

type Deps = Pick<Config, 'dnsServers' | 'dnsTimeoutMs' | 'domainConnect'>;

const httpUrl = (value: unknown): URL | null => {
  if (typeof value !== 'string' || value.length > 2048) return null;
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password
      ? url
      : null;
  } catch {
    return null;
  }
};
const text = (value: unknown, max = 200): string | null =>
  typeof value === 'string' && value.trim() !== '' && value.length <= max ? value.trim() : null;

export async function discover(domain: string, config: Deps): Promise<Discovery> {
  const txt = await lookupTxt(`_domainconnect.${domain}`, {
    servers: config.dnsServers,
    timeoutMs: config.dnsTimeoutMs,
  });
  if (!txt.ok) {
    return {
      ok: false,
      reason: 'no_discovery_record',
      detail: `The DNS lookup of _domainconnect.${domain} failed (${txt.failure}).`,
    };
  }
  const base = txt.records.map(providerBase).find((u) => u !== null);
  if (!base) {
    return {
      ok: false,
      reason: 'no_discovery_record',
      detail: `${domain} has no _domainconnect TXT record: its DNS provider does not offer Domain Connect.`,
    };
  }
  const answer = await providerGet(
    new URL(`${base.pathname.replace(/\/+$/, '')}/v2/${domain}/settings`, base),
    config,
  );
  if (!answer.ok) {
    return answer.kind === 'refused'
      ? {
          ok: false,
          reason: 'provider_address_refused',
          detail: `The DNS provider's API is refused: ${answer.reason}.`,
        }
      : {
          ok: false,
          reason: 'provider_unreachable',
          detail: `The DNS provider's API did not answer: ${answer.reason}.`,
        };
  }
  if (answer.status !== 200) {
    return {
      ok: false,
      reason: 'provider_unreachable',
      detail: `The DNS provider's API answered ${answer.status} for ${domain}'s settings.`,
    };
  }
  let json: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(answer.body);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('not an object');
    json = parsed as Record<string, unknown>;
  } catch {
    return {
      ok: false,
      reason: 'invalid_settings',
      detail: "The DNS provider's settings are not a JSON object.",
    };
  }
  const providerId = text(json.providerId);
  if (!providerId)
    return {
      ok: false,
      reason: 'invalid_settings',
      detail: "The DNS provider's settings carry no providerId.",
    };
  const displayName = text(json.providerDisplayName) ?? text(json.providerName) ?? providerId;
  const urlSyncUX = httpUrl(json.urlSyncUX);
  if (!urlSyncUX) {
    return {
      ok: false,
      reason: 'no_synchronous_flow',
      detail: `${displayName} offers no synchronous Domain Connect flow (urlSyncUX) for ${domain}.`,
    };
  }
  return { ok: true, settings: { providerId, displayName, urlSyncUX, urlAPI: httpUrl(json.urlAPI) } };
}

/**
 * Whether the provider holds the platform's template: `GET {urlAPI}/v2/domainTemplates/providers/
 * {providerId}/services/{serviceId}` answers 200 (true) or 404 (false); null when it cannot be told (no
 * urlAPI, no template configured, any other answer or none).
 */
export async function templateConfirmed(
  settings: ProviderSettings,
  template: { providerId: string; serviceId: string } | null,
  config: Deps,
): Promise<boolean | null> {
  if (!template || !settings.urlAPI) return null;
  const base = settings.urlAPI;
  const url = new URL(
    `${base.pathname.replace(/\/+$/, '')}/v2/domainTemplates/providers/${encodeURIComponent(template.providerId)}/services/${encodeURIComponent(template.serviceId)}`,
    base,
  );
  const answer = await providerGet(url, config);
  if (!answer.ok) return null;
  return answer.status === 200 ? true : answer.status === 404 ? false : null;
}
