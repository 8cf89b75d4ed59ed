// Serves the link pages (pages.ts) outside /api/v2, as /docs is served: plain GET routes, no operation.
import type { Express, NextFunction, Request, Response } from 'express';
import { isUuid } from '../http/uuid.js';
import { buildLinkPages } from './pages.js';

export function mountLinkPages(app: Express, platformName: string): void {
  for (const page of buildLinkPages(platformName)) {
    app.get(page.path, (req: Request, res: Response, next: NextFunction) => {
      // An invitation link names a uuid; anything else under /invitations/ is no page of ours.
      const id = req.params.id;
      if (typeof id === 'string' && !isUuid(id)) {
        next();
        return;
      }
      res
        .set({
          'Content-Security-Policy': page.csp,
          // The URL may hold a single-use token: never kept by a cache, never sent on as a referrer.
          'Cache-Control': 'no-store',
          'Referrer-Policy': 'no-referrer',
          'X-Content-Type-Options': 'nosniff',
          'X-Frame-Options': 'DENY',
          'Cross-Origin-Opener-Policy': 'same-origin',
        })
        .type('html')
        .send(page.html);
    });
  }
}
