// Bearer authentication as openapi-fetch middleware, so `client.raw` is authenticated too.
import type { Middleware } from 'openapi-fetch';

export type TokenSource = () => string | null | undefined | Promise<string | null | undefined>;

/**
 * Asks `getToken` on every request (and every retry), so a caller that refreshes short-lived access
 * tokens (15 minutes, DECISIONS.md §3) never sends a stale one.
 */
export function authMiddleware(getToken: TokenSource): Middleware {
  return {
    async onRequest({ request }) {
      // An Authorization header given for one call wins over the client's credentials.
      if (request.headers.has('authorization')) return undefined;
      const token = await getToken();
      if (token) request.headers.set('Authorization', `Bearer ${token}`);
      return undefined;
    },
  };
}
