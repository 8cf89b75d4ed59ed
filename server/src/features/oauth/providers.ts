// The configured OpenID providers (OAUTH_PROVIDERS, DECISIONS.md §5): which are offered on a host, and
// each one's openid-client Configuration, discovered from its issuer and kept for a while.
import * as oidc from 'openid-client';
import type { Config, OAuthProviderConfig } from '../../config.js';
import type { Db } from '../../db/client.js';
import { API_BASE_PATH } from '../../spec.js';
import * as store from './store.js';

/** Discovery, the token request, the JWKS and userinfo each give up after this long. */
const PROVIDER_TIMEOUT_SECONDS = 10;
/** A discovered configuration is used this long; a failed discovery is tried again on the next flow. */
const DISCOVERY_TTL_MS = 60 * 60 * 1000;

/**
 * The providers offered on `host`: on a reseller's hostname (one a provider lists in `hosts`, or one
 * of the resellers table) those listing it; on any other host, the platform's own, those without `hosts`.
 */
export async function providersForHost(db: Db, config: Config, host: string): Promise<OAuthProviderConfig[]> {
  const listed = config.oauthProviders.filter((p) => p.hosts?.includes(host));
  if (listed.length > 0) return listed;
  if (await store.isResellerHost(db, host)) return [];
  return config.oauthProviders.filter((p) => p.hosts === null);
}

/** A provider offered on `host`, or undefined. */
export async function providerOnHost(
  db: Db,
  config: Config,
  host: string,
  id: string,
): Promise<OAuthProviderConfig | undefined> {
  return (await providersForHost(db, config, host)).find((p) => p.id === id);
}

/** The configured provider `id`, wherever it is offered (the callback is always on the platform's URL). */
export function configuredProvider(config: Config, id: string): OAuthProviderConfig | undefined {
  return config.oauthProviders.find((p) => p.id === id);
}

/** The redirect_uri registered at the provider: `{PUBLIC_BASE_URL}/api/v2/auth/oauth/{id}/callback`. */
export function callbackUrl(config: Config, providerId: string): string {
  return `${config.publicBaseUrl}${API_BASE_PATH}/auth/oauth/${encodeURIComponent(providerId)}/callback`;
}

const discovered = new Map<string, { at: number; config: Promise<oidc.Configuration> }>();

/**
 * The provider's client configuration, from OpenID discovery at its issuer. Kept per process for an
 * hour; a discovery that fails is forgotten at once, so the next flow tries again.
 */
export function clientFor(provider: OAuthProviderConfig, nowMs = Date.now()): Promise<oidc.Configuration> {
  const key = JSON.stringify([provider.issuer, provider.clientId, provider.clientSecret]);
  const cached = discovered.get(key);
  if (cached && nowMs - cached.at < DISCOVERY_TTL_MS) return cached.config;
  const insecure = new URL(provider.issuer).protocol === 'http:';
  const config = oidc
    .discovery(new URL(provider.issuer), provider.clientId, undefined, undefined, {
      timeout: PROVIDER_TIMEOUT_SECONDS,
      // config.ts allows http only for an issuer on loopback.
      ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
    })
    .then((c) => {
      // client_secret_post unless the provider offers only client_secret_basic (RFC 8414 metadata).
      const methods = c.serverMetadata().token_endpoint_auth_methods_supported;
      const basicOnly = methods?.includes('client_secret_basic') && !methods.includes('client_secret_post');
      const auth = basicOnly
        ? oidc.ClientSecretBasic(provider.clientSecret)
        : oidc.ClientSecretPost(provider.clientSecret);
      const client = new oidc.Configuration(c.serverMetadata(), provider.clientId, undefined, auth);
      client.timeout = PROVIDER_TIMEOUT_SECONDS;
      if (insecure) oidc.allowInsecureRequests(client);
      return client;
    });
  discovered.set(key, { at: nowMs, config });
  config.catch(() => {
    if (discovered.get(key)?.config === config) discovered.delete(key);
  });
  return config;
}
