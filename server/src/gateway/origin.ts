// Cross-site WebSocket hijacking: a browser sends `Origin` with every upgrade, and a page of another site
// must not open a socket with a ticket it got hold of. Only browsers send it, so its absence (svcctl, the
// SDK, scripts) is fine; a present one must be PUBLIC_BASE_URL's origin or one of ALLOWED_ORIGINS.
import type { Config } from '../config.js';

export function originChecker(
  config: Pick<Config, 'publicBaseUrl' | 'allowedOrigins'>,
): (origin: string | undefined) => boolean {
  const allowed = new Set([new URL(config.publicBaseUrl).origin, ...config.allowedOrigins]);
  return (origin) => {
    if (origin === undefined) return true;
    try {
      return allowed.has(new URL(origin).origin);
    } catch {
      return false;
    }
  };
}
