// The provider's side of the callback, all through openid-client: the authorization response checked
// (state, and `iss` per RFC 9207), the code redeemed with the PKCE verifier, the ID token verified
// (signature from the provider's JWKS, issuer, audience, expiry, nonce), and the userinfo claims read
// for the subject the ID token names. Any failure throws; the caller answers `login_failed`.
import * as oidc from 'openid-client';
import type { Config, OAuthProviderConfig } from '../../config.js';
import { callbackUrl, clientFor } from './providers.js';

export interface ProviderIdentity {
  /** The identity: the issuer and the subject (OpenID Connect Core §5.7: the only stable key). */
  issuer: string;
  subject: string;
  /** Lowercase, and only when the provider says it verified it; an unverified address counts as none. */
  email: string | null;
  name: string | null;
  locale: string | null;
  picture: string | null;
}

/** The PKCE verifier and nonce of a flow, sealed between start and callback. */
export interface FlowSecrets {
  verifier: string;
  nonce: string;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

export async function identityFromCallback(
  config: Config,
  provider: OAuthProviderConfig,
  query: Record<string, string | undefined>,
  state: string,
  secrets: FlowSecrets,
): Promise<ProviderIdentity> {
  const client = await clientFor(provider);
  // The redirect_uri sent to the token endpoint is this URL without its query (openid-client), so it
  // is built from configuration, never from the request's Host.
  const current = new URL(callbackUrl(config, provider.id));
  for (const [name, value] of Object.entries(query))
    if (value !== undefined) current.searchParams.set(name, value);
  const tokens = await oidc.authorizationCodeGrant(client, current, {
    pkceCodeVerifier: secrets.verifier,
    expectedState: state,
    expectedNonce: secrets.nonce,
    idTokenExpected: true,
  });
  const idToken = tokens.claims();
  if (!idToken) throw new Error('no ID token');
  let claims: Record<string, unknown> = { ...idToken };
  // Many providers (and oidc-provider by default) put the scope's claims in userinfo only.
  if (client.serverMetadata().userinfo_endpoint) {
    const userinfo = await oidc.fetchUserInfo(client, tokens.access_token, idToken.sub);
    claims = { ...claims, ...userinfo, sub: idToken.sub };
  }
  const verified = claims.email_verified === true || claims.email_verified === 'true';
  const email = str(claims.email);
  const given = [str(claims.given_name), str(claims.family_name)].filter(Boolean).join(' ');
  return {
    issuer: idToken.iss,
    subject: idToken.sub,
    email: verified && email !== null && email.length <= 254 ? email.toLowerCase() : null,
    name: str(claims.name) ?? (given || null),
    locale: str(claims.locale),
    picture: str(claims.picture),
  };
}

/** A new flow's authorization URL and what the callback needs to finish it. */
export async function authorizationRequest(
  config: Config,
  provider: OAuthProviderConfig,
): Promise<{ url: string; state: string; secrets: FlowSecrets }> {
  const client = await clientFor(provider);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(client, {
    redirect_uri: callbackUrl(config, provider.id),
    scope: provider.scopes.join(' '),
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  return { url: url.href, state, secrets: { verifier, nonce } };
}
