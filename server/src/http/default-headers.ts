// Headers every answer carries unless its route says otherwise (DECISIONS.md §7). `no-store`: answers
// hold tokens and personal data, and no cache on the way may keep them (RFC 6749 §5.1 requires it of
// token answers); a route that may be cached says so in its spec and sets its own Cache-Control
// (assets, public reads), which replaces this one. `nosniff`: a browser takes the declared type, never
// guesses one from the bytes.
import type { NextFunction, Request, Response } from 'express';

export function defaultHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  next();
}

/**
 * Public reads the same for everyone (catalog, incidents, maintenances, capabilities, captcha
 * configuration, reseller branding): a cache may keep them a minute, as their spec says.
 */
export const PUBLIC_READ = { 'Cache-Control': 'public, max-age=60' };
