// The bearer credential of a request and the refusal of a missing or bad one. Who it is and what it
// may do: authz/credentials.ts and authz/authorize.ts.
import { ApiError } from './errors.js';

export const unauthenticated = (detail = 'Sign in: the access token is missing, invalid or expired, or the session ended.') =>
  new ApiError(401, 'unauthenticated', detail, { headers: { 'WWW-Authenticate': 'Bearer' } });

/** The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1 token68), or null. */
export const BEARER = /^Bearer +([A-Za-z0-9._~+/-]+=*)$/i;
export function bearerToken(authorization: string | undefined): string | null {
  return BEARER.exec(authorization ?? '')?.[1] ?? null;
}
